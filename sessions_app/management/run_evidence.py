"""What the commands that record audit evidence share: the --tenant and --run arguments, and refused input
reported as a command error (its message, no traceback)."""

from collections.abc import Iterator
from contextlib import contextmanager

from django.core.management.base import CommandError, CommandParser

from sessions_app.audit.inputs import AuditInputError


def add_tenant_and_run(parser: CommandParser) -> None:
    """The two arguments every command about one run of one tenant starts with."""
    parser.add_argument("--tenant", required=True, help="Tenant slug.")
    parser.add_argument("--run", required=True, help="Run id.")


@contextmanager
def refused_input_as_command_error() -> Iterator[None]:
    """An `AuditInputError` raised inside becomes a `CommandError` with the same message."""
    try:
        yield
    except AuditInputError as error:
        raise CommandError(error.message) from None
