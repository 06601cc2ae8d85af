from django.core.management.base import BaseCommand, CommandError

from sessions_app.audit import service
from sessions_app.audit.inputs import AuditInputError
from sessions_app.tenancy.scoping import tenant_for_command


class Command(BaseCommand):
    help = (
        "Record that a run is waiting for a person's decision until a deadline (resume token stored hashed)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--tenant", required=True, help="Tenant slug.")
        parser.add_argument("--run", required=True, help="Run id.")
        parser.add_argument("--owner", required=True, help="Who must decide.")
        parser.add_argument("--decision", required=True, help="The decision needed, in a sentence.")
        parser.add_argument(
            "--deadline", required=True, help="ISO 8601 with a time zone, e.g. 2026-12-01T09:00Z."
        )
        parser.add_argument(
            "--resume-token", default=None, help="Your own token; one is generated if omitted."
        )

    def handle(self, *args, **options):
        tenant = tenant_for_command(options["tenant"])
        data = {
            "run_id": options["run"],
            "owner": options["owner"],
            "decision": options["decision"],
            "deadline": options["deadline"],
        }
        if options["resume_token"] is not None:
            data["resume_token"] = options["resume_token"]
        try:
            wait, generated, report = service.add_wait(tenant, data)
        except AuditInputError as error:
            raise CommandError(error.message) from None
        self.stderr.write(
            f"Wait {wait.id} recorded until {wait.deadline.isoformat()}; run {report.run_id}: {report.verdict}"
        )
        if generated:
            self.stderr.write("Resume token (shown once, only its hash is stored):")
            self.stdout.write(generated)
