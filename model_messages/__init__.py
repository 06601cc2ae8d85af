"""pydantic-ai messages as Sessiondesk stores and reads them: their JSON form (serialization) and their plain text
and role (rendering). Pure (no Django), so both apps import it: sessions_app stores transcripts with it and
search_app indexes the same text without importing sessions_app."""
