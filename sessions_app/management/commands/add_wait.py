from sessions_app.audit import evidence
from sessions_app.management.run_evidence import RunEvidenceCommand
from sessions_app.models import Tenant


class Command(RunEvidenceCommand):
    help = "Record that a run is waiting for a person's decision until a deadline (resume token stored hashed)."
    evidence_options = {
        "owner": {"required": True, "help": "Who must decide."},
        "decision": {"required": True, "help": "The decision needed, in a sentence."},
        "deadline": {"required": True, "help": "ISO 8601 with a time zone, e.g. 2026-12-01T09:00Z."},
        "resume_token": {"default": None, "help": "Your own token; one is generated if omitted."},
    }

    def record(self, tenant: Tenant, data: dict[str, str]) -> None:
        wait, generated, report = evidence.add_wait(tenant, data)
        self.stderr.write(
            f"Wait {wait.id} recorded until {wait.deadline.isoformat()}; run {report.run_id}: {report.verdict}"
        )
        if generated:
            self.stderr.write("Resume token (shown once, only its hash is stored):")
            self.stdout.write(generated)
