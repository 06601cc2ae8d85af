from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from sessions_app.audit import evidence
from sessions_app.management.run_evidence import add_tenant_and_run, refused_input_as_command_error
from sessions_app.tenancy.scoping import tenant_for_command


class Command(BaseCommand):
    help = (
        "Record that a run is waiting for a person's decision until a deadline (resume token stored hashed)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_tenant_and_run(parser)
        parser.add_argument("--owner", required=True, help="Who must decide.")
        parser.add_argument("--decision", required=True, help="The decision needed, in a sentence.")
        parser.add_argument(
            "--deadline", required=True, help="ISO 8601 with a time zone, e.g. 2026-12-01T09:00Z."
        )
        parser.add_argument(
            "--resume-token", default=None, help="Your own token; one is generated if omitted."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_for_command(options["tenant"])
        data = {
            "run_id": options["run"],
            "owner": options["owner"],
            "decision": options["decision"],
            "deadline": options["deadline"],
        }
        if options["resume_token"] is not None:
            data["resume_token"] = options["resume_token"]
        with refused_input_as_command_error():
            wait, generated, report = evidence.add_wait(tenant, data)
        self.stderr.write(
            f"Wait {wait.id} recorded until {wait.deadline.isoformat()}; run {report.run_id}: {report.verdict}"
        )
        if generated:
            self.stderr.write("Resume token (shown once, only its hash is stored):")
            self.stdout.write(generated)
