import json
from collections.abc import Iterable
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from sessions_app.audit import service
from sessions_app.management.run_evidence import refused_input_as_command_error
from sessions_app.models import Run
from sessions_app.tenancy.scoping import runs_with_conversation, tenant_for_command


def _as_text(report: service.AuditReport) -> str:
    lines = [f"run {report.run_id} (conversation {report.conversation_id}): {report.verdict}"]
    for finding in report.findings:
        lines.append(f"  [{finding['gate']}] {finding['code']} ({finding['class']})")
        lines.append(f"    {finding['detail']}")
        lines.append(f"    Next: {finding['guidance']}")
    return "\n".join(lines)


class Command(BaseCommand):
    help = "Audit a run (or every run of a tenant) now and print its verdict and findings."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", help="Tenant slug.")
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument("--run", help="Run id.")
        which.add_argument("--all", action="store_true", help="Every run of the tenant.")
        which.add_argument(
            "--refresh-due",
            action="store_true",
            help="Re-audit runs whose wait deadline passed (all tenants).",
        )
        parser.add_argument("--format", choices=["json", "text"], default="text")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["refresh_due"]:
            count = service.refresh_due_verdicts()
            self.stdout.write(f"Re-audited {count} run(s) whose verdict was due.")
            return
        if not options["tenant"]:
            raise CommandError("--tenant is required with --run or --all.")
        tenant = tenant_for_command(options["tenant"])
        runs: Iterable[Run]
        if options["run"]:
            with refused_input_as_command_error():
                runs = [service.get_run(tenant, options["run"])]
        else:
            runs = runs_with_conversation(tenant).order_by("started_at", "id")
        reports = [service.audit_run(run) for run in runs]
        if options["format"] == "json":
            data = reports[0].as_dict() if options["run"] else [r.as_dict() for r in reports]
            self.stdout.write(json.dumps(data, indent=2, ensure_ascii=False))
        else:
            self.stdout.write("\n".join(_as_text(report) for report in reports))
