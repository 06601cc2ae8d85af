"""What a search can answer besides results: refused input, an unknown or out-of-scope target, no scope.

Pure, so the agent-side client (sessions_app.client.search) raises and catches the very same classes. Both are
`RejectedInput`s, so the API answers them as every other refused input: `{"error": message}`, 400 or 404.
"""

from input_errors import RejectedInput

NEEDS_CONVERSATION = (
    "Conversation-scoped search needs a conversation id, and none was given, so nothing was searched. "
    "Pass the conversation id (an agent run's `conversation_id`), or ask for a wider scope you are allowed to see."
)
NEEDS_RUN = "Run-scoped search needs a run id, and none was given, so nothing was searched."


class SearchError(RejectedInput):
    """Bad input to a search or a context read (400): the message names the problem. Nothing was searched."""


class NotFound(RejectedInput, LookupError):
    """The conversation or run does not exist for this caller (404; missing and out of scope read the same)."""

    def __init__(self, message: str, status: int = 404) -> None:
        super().__init__(message, status)
