"""Stored verdicts let lists filter and count runs by verdict, within one tenant."""

from sessions_app.audit import service
from sessions_app.audit import verdict as v
from tests.sessions_app.audit.audit_cases import ingest, interrupted_history, mailer_history, outcome_receipt


def test_runs_filter_by_stored_verdict_and_counts_put_graver_verdicts_first(tenant, other_tenant):
    ingest(tenant, mailer_history("c-1"), run_id="r-1", conversation_id="c-1")
    ingest(tenant, mailer_history("c-2"), run_id="r-2", conversation_id="c-2")
    ingest(tenant, interrupted_history("c-3"), run_id="r-3", conversation_id="c-3", state="interrupted")
    ingest(other_tenant, interrupted_history("c-9"), run_id="r-9", conversation_id="c-9", state="interrupted")
    service.add_receipt(tenant, outcome_receipt("r-1"))

    assert list(service.runs_with_verdict(tenant, [v.READY]).values_list("run_id", flat=True)) == ["r-1"]
    interrupted = service.runs_with_verdict(tenant, [v.INTERRUPTED_TOOL, v.UNTRUSTED_HISTORY])
    assert list(interrupted.values_list("run_id", flat=True)) == ["r-3"]
    assert list(service.verdict_counts(tenant).items()) == [
        (v.INTERRUPTED_TOOL, 1),
        (v.MISSING_OUTCOME_RECEIPT, 1),
        (v.READY, 1),
    ]
