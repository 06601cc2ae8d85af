"""The one shape of refused input: a message that names the problem and the HTTP status that says why.

Pure, and a top-level package so that both apps raise it without one importing the other: sessions_app's rooms
(API bodies, ingest, audit) and search_app's errors (`SearchError`, `NotFound`). `api_key_required` answers every
one of them as `{"error": message}` with its status.
"""


class RejectedInput(ValueError):
    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
