"""What a search can answer besides results: refused input, an unknown or out-of-scope target, no scope.

Pure, so the agent-side client (sessions_app.client.search) raises and catches the very same classes.
"""

NEEDS_CONVERSATION = (
    "Conversation-scoped search needs a conversation id, and none was given, so nothing was searched. "
    "Pass the conversation id (an agent run's `conversation_id`), or ask for a wider scope you are allowed to see."
)
NEEDS_RUN = "Run-scoped search needs a run id, and none was given, so nothing was searched."


class SearchError(ValueError):
    """Bad input to a search or a context read: the message names the problem. Nothing was searched."""


class NotFound(LookupError):
    """The conversation or run does not exist for this caller (missing and out of scope read the same)."""
