"""People's marks on conversations: scores and labels, comments with mentions, review queues and share links.

Pure: `score_filters` (the `score:`/`label:`/`sort:` clauses of a list or search query), `score_values` (what a
score definition accepts), `comment_markup` (markdown to inert HTML), `targets` (what a mark is on). The services
(`scores`, `comments`, `queues`, `share_links`) write through one transaction each and append an audit event.
"""
