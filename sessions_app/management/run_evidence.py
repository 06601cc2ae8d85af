"""What the commands that record audit evidence share: the --tenant and --run arguments, the evidence's own
options passed on as its data, and refused input reported as a command error (its message, no traceback)."""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from sessions_app.audit.inputs import AuditInputError
from sessions_app.models import Tenant
from sessions_app.tenancy.scoping import tenant_for_command


@contextmanager
def refused_input_as_command_error() -> Iterator[None]:
    """An `AuditInputError` raised inside becomes a `CommandError` with the same message."""
    try:
        yield
    except AuditInputError as error:
        raise CommandError(error.message) from None


class RunEvidenceCommand(BaseCommand):
    """Records one piece of evidence about a run of a tenant (`record`), from --tenant, --run and the options
    named in `evidence_options`."""

    evidence_options: dict[str, dict[str, Any]]
    """Each option as the evidence data's key (`--with-dashes` on the command line) and its add_argument keywords;
    an option left at None is not passed on."""

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True, help="Tenant slug.")
        parser.add_argument("--run", required=True, help="Run id.")
        for name, keywords in self.evidence_options.items():
            parser.add_argument("--" + name.replace("_", "-"), **keywords)

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_for_command(options["tenant"])
        data = {"run_id": options["run"]}
        data.update({name: options[name] for name in self.evidence_options if options[name] is not None})
        with refused_input_as_command_error():
            self.record(tenant, data)

    def record(self, tenant: Tenant, data: dict[str, str]) -> None:
        """Record the evidence `data` describes and say what was recorded."""
        raise NotImplementedError
