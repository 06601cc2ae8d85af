from sessions_app.audit import evidence
from sessions_app.audit.vocabulary import Evidence
from sessions_app.management.run_evidence import RunEvidenceCommand
from sessions_app.models import Tenant


class Command(RunEvidenceCommand):
    help = "Record an outcome receipt for a run (a reference or digest of the destination, never its contents)."
    evidence_options = {
        "effect": {"required": True, "help": "The intended effect, e.g. invoice-email-sent."},
        "evidence": {"required": True, "choices": [level.value for level in Evidence]},
        "checked_by": {"required": True, "help": "Who or what performed the check."},
        "reference": {"default": "", "help": "A reference or digest of the destination."},
    }

    def record(self, tenant: Tenant, data: dict[str, str]) -> None:
        receipt, report = evidence.add_receipt(tenant, data)
        self.stdout.write(f"Receipt {receipt.id} recorded ({receipt.evidence}); run {report.run_id}: {report.verdict}")
