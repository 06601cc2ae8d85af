from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from sessions_app.audit import evidence
from sessions_app.audit.vocabulary import Evidence
from sessions_app.management.run_evidence import add_tenant_and_run, refused_input_as_command_error
from sessions_app.tenancy.scoping import tenant_for_command


class Command(BaseCommand):
    help = (
        "Record an outcome receipt for a run (a reference or digest of the destination, never its contents)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_tenant_and_run(parser)
        parser.add_argument("--effect", required=True, help="The intended effect, e.g. invoice-email-sent.")
        parser.add_argument("--evidence", required=True, choices=[level.value for level in Evidence])
        parser.add_argument("--checked-by", required=True, help="Who or what performed the check.")
        parser.add_argument("--reference", default="", help="A reference or digest of the destination.")

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_for_command(options["tenant"])
        data = {
            "run_id": options["run"],
            "effect": options["effect"],
            "evidence": options["evidence"],
            "checked_by": options["checked_by"],
            "reference": options["reference"],
        }
        with refused_input_as_command_error():
            receipt, report = evidence.add_receipt(tenant, data)
        self.stdout.write(
            f"Receipt {receipt.id} recorded ({receipt.evidence}); run {report.run_id}: {report.verdict}"
        )
