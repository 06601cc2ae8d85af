"""Operators follow a run's snapshots and see what compaction removed between two of them."""

from django.db import connection
from django.test.utils import CaptureQueriesContext

from sessions_app.models import Run, Snapshot
from tests.sessions_app.dashboard.conftest import SECRET


def _first_run(world) -> Run:
    return Run.objects.get(tenant=world.acme, run_id="conv-deploy-run-1")


def test_the_list_shows_each_snapshot_with_state_and_size(world, as_role):
    run = _first_run(world)
    client = as_role("operator")
    with CaptureQueriesContext(connection) as queries:
        page = client.get(f"/r/{run.run_id}/snapshots/").content.decode()
    for snapshot in Snapshot.objects.filter(run=run):
        assert f'href="/r/{run.run_id}/snapshots/{snapshot.seq}/diff"' in page
    # The list shows no content, so the ids each snapshot names stay unread.
    reads = [q["sql"] for q in queries.captured_queries if 'FROM "sessions_app_snapshot"' in q["sql"]]
    assert reads and not any("message_ids" in sql for sql in reads)


def test_a_diff_after_compaction_shows_the_removed_messages(world, as_role):
    run = _first_run(world)
    snapshots = list(Snapshot.objects.filter(run=run).order_by("seq"))
    shrunk = next(
        later
        for earlier, later in zip(snapshots, snapshots[1:], strict=False)
        if later.message_count < earlier.message_count + 1
    )
    page = as_role("operator").get(f"/r/{run.run_id}/snapshots/{shrunk.seq}/diff").content.decode()
    assert "compaction removed" in page
    assert "− removed" in page


def test_snapshot_text_is_masked(world, as_role):
    run = _first_run(world)
    client = as_role("operator")
    for snapshot in Snapshot.objects.filter(run=run):
        assert SECRET not in client.get(f"/r/{run.run_id}/snapshots/{snapshot.seq}/diff").content.decode()


def test_an_unknown_snapshot_is_404(world, as_role):
    run = _first_run(world)
    assert as_role("operator").get(f"/r/{run.run_id}/snapshots/999/diff").status_code == 404
