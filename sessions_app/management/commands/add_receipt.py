from django.core.management.base import BaseCommand, CommandError

from sessions_app.audit import gates, service
from sessions_app.audit.inputs import AuditInputError
from sessions_app.tenancy.scoping import tenant_for_command


class Command(BaseCommand):
    help = (
        "Record an outcome receipt for a run (a reference or digest of the destination, never its contents)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--tenant", required=True, help="Tenant slug.")
        parser.add_argument("--run", required=True, help="Run id.")
        parser.add_argument("--effect", required=True, help="The intended effect, e.g. invoice-email-sent.")
        parser.add_argument("--evidence", required=True, choices=gates.EVIDENCE_LEVELS)
        parser.add_argument("--checked-by", required=True, help="Who or what performed the check.")
        parser.add_argument("--reference", default="", help="A reference or digest of the destination.")

    def handle(self, *args, **options):
        tenant = tenant_for_command(options["tenant"])
        data = {
            "run_id": options["run"],
            "effect": options["effect"],
            "evidence": options["evidence"],
            "checked_by": options["checked_by"],
            "reference": options["reference"],
        }
        try:
            receipt, report = service.add_receipt(tenant, data)
        except AuditInputError as error:
            raise CommandError(error.message) from None
        self.stdout.write(
            f"Receipt {receipt.id} recorded ({receipt.evidence}); run {report.run_id}: {report.verdict}"
        )
