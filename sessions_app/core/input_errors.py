"""The one shape of refused input: a message that names the problem and the HTTP status that says why."""


class RejectedInput(ValueError):
    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
