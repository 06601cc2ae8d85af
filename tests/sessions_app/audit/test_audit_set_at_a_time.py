"""Auditing many runs at once costs one query per fact, however many runs: an import of a thousand runs is not
fourteen thousand queries, and the verdicts are those of auditing each run alone."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from sessions_app.audit import service
from sessions_app.models import Run
from tests.sessions_app.audit.audit_cases import (
    history_with_orphan_result,
    history_without_system_prompt,
    ingest,
    interrupted_history,
    mailer_history,
)

pytestmark = pytest.mark.django_db

HISTORIES = (mailer_history, history_without_system_prompt, history_with_orphan_result, interrupted_history)


def make_runs(tenant, count: int) -> list[Run]:
    return [
        ingest(tenant, HISTORIES[i % len(HISTORIES)](f"conv-{i}"), run_id=f"run-{i}", conversation_id=f"conv-{i}")
        for i in range(count)
    ]


def queries_to_audit(tenant, runs: list[Run]) -> int:
    with CaptureQueriesContext(connection) as captured:
        service.audit_runs(tenant, runs)
    return len(captured)


def test_the_query_count_does_not_grow_with_the_runs(tenant):
    runs = make_runs(tenant, 12)
    assert queries_to_audit(tenant, runs[:3]) == queries_to_audit(tenant, runs)


def test_the_verdicts_equal_auditing_each_run_alone(tenant):
    runs = make_runs(tenant, 8)
    together = {report.run_id: (report.verdict, report.findings) for report in service.audit_runs(tenant, runs)}
    alone = {run.run_id: (r.verdict, r.findings) for run in runs for r in [service.audit_run(run)]}
    assert together == alone
    assert len({verdict for verdict, _ in together.values()}) == 4  # four different verdicts among them
