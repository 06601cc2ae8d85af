"""What a score or comment is on: the whole conversation, one of its runs, or one message position. Pure.

Stored as one short key per row (`c`, `r:<run id>`, `m:<position>`) so a unique key over (tenant, definition,
conversation, target, author) needs no nullable columns.
"""

from dataclasses import dataclass

from input_errors import RejectedInput


@dataclass(frozen=True)
class Target:
    run_id: str = ""
    position: int | None = None

    @property
    def key(self) -> str:
        if self.position is not None:
            return f"m:{self.position}"
        if self.run_id:
            return f"r:{self.run_id}"
        return "c"

    @property
    def label(self) -> str:
        if self.position is not None:
            return f"message {self.position}"
        if self.run_id:
            return f"run {self.run_id}"
        return "conversation"


def target_of(run_id: str = "", position: int | None = None) -> Target:
    """A target from its parts; a run and a message at once is refused (a message already names its run)."""
    if run_id and position is not None:
        raise RejectedInput("Name a run or a message position, not both.")
    if position is not None and position < 0:
        raise RejectedInput("A message position is 0 or more.")
    return Target(run_id=run_id, position=position)


def parse_target_key(key: str) -> Target:
    if key.startswith("m:") and key[2:].isdigit():
        return Target(position=int(key[2:]))
    if key.startswith("r:") and len(key) > 2:
        return Target(run_id=key[2:])
    return Target()
