"""GET /api/v1/runs/<id>/snapshots (cursor-paged, write order) and GET /api/v1/runs/<id>/snapshots/diff over a
compacted real-harness run: the diff is the dashboard's (the same removed, added and kept counts), a
compaction shows as removed messages and an added summary, text is masked with the tenant's patterns, another
tenant's run and a missing snapshot are 404s, bad input a 400 naming it."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from pydantic_ai_harness.step_persistence import InMemoryStepStore

from sessions_app.demo.scenarios import store_as_payloads
from sessions_app.ingest.payloads import parse_snapshot
from sessions_app.ingest.service import ingest_snapshots
from sessions_app.models import Run, Snapshot
from sessions_app.tenancy.api_keys import create_api_key
from sessions_app.transcripts.masking import masker_for
from sessions_app.transcripts.snapshots import diff_with_previous
from tests.scenarios import run_scenario

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(tenant):
    store = InMemoryStepStore()
    run_scenario("summarizing", store, conversation_id="conv-diff")
    ingest_snapshots(tenant, [parse_snapshot(p) for p in store_as_payloads(store)], source="server", via="import")
    return Run.objects.get(tenant=tenant, conversation__external_id="conv-diff")


@pytest.fixture
def key(tenant):
    return create_api_key(tenant, "server")[1]


def _get(client, path, key, **params):
    return client.get(path, params, headers={"Authorization": f"Bearer {key}"})


def test_the_snapshots_page_in_write_order(client, run, key):
    seqs, cursor = [], None
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        body = _get(client, f"/api/v1/runs/{run.run_id}/snapshots", key, **params).json()
        seqs += [s["seq"] for s in body["snapshots"]]
        if not (cursor := body["next_cursor"]):
            break
    assert seqs == list(Snapshot.objects.filter(run=run).order_by("seq").values_list("seq", flat=True))
    assert len(seqs) > 2


@pytest.mark.parametrize("path", ["/api/v1/runs/{run_id}/snapshots", "/api/v1/runs/{run_id}"])
def test_a_listing_of_snapshots_reads_none_of_the_ids_they_name(client, run, key, path):
    with CaptureQueriesContext(connection) as queries:
        body = _get(client, path.format(run_id=run.run_id), key).json()
    assert [s["messages"] for s in body["snapshots"]] == [
        len(ids) for ids in Snapshot.objects.filter(run=run).order_by("seq").values_list("message_ids", flat=True)
    ]
    snapshot_reads = [q["sql"] for q in queries.captured_queries if 'FROM "sessions_app_snapshot"' in q["sql"]]
    assert snapshot_reads and not any("message_ids" in sql for sql in snapshot_reads)


def test_the_diff_is_the_dashboard_s_and_shows_the_compaction(client, tenant, run, key):
    compactions = 0
    for seq in Snapshot.objects.filter(run=run).order_by("seq").values_list("seq", flat=True):
        body = _get(client, f"/api/v1/runs/{run.run_id}/snapshots/diff", key, to=seq).json()
        _, previous, diff = diff_with_previous(run, seq, masker_for(tenant))
        assert (body["kept"], body["removed"], body["added"]) == (diff.kept, diff.removed, diff.added)
        assert (body["from"] and body["from"]["seq"]) == (previous and previous.seq) and body["to"]["seq"] == seq
        assert [row["change"] for row in body["rows"]] == [row.change for row in diff.rows]
        if body["compacted"]:
            compactions += 1
            removed = [m for row in body["rows"] if row["change"] == "removed" for m in row["messages"]]
            assert len(removed) == body["removed"] and body["summary_added"]
    assert compactions >= 1


def test_from_and_to_diff_any_two_snapshots(client, run, key):
    first, *_, last = Snapshot.objects.filter(run=run).order_by("seq")
    body = _get(client, f"/api/v1/runs/{run.run_id}/snapshots/diff", key, **{"from": first.seq, "to": last.seq})
    assert body.status_code == 200
    answer = body.json()
    assert answer["from"]["seq"] == first.seq and answer["to"]["seq"] == last.seq
    assert answer["kept"] + answer["added"] == last.message_count
    assert answer["kept"] + answer["removed"] == first.message_count


def test_message_text_is_masked_with_the_tenant_s_patterns(client, tenant, run, key):
    tenant.redaction_patterns = [r"[Ww]eather|[Ss]ummary"]
    tenant.save()
    first = Snapshot.objects.filter(run=run).order_by("seq").first()
    body = _get(client, f"/api/v1/runs/{run.run_id}/snapshots/diff", key, to=first.seq).json()
    texts = " ".join(m["text"] for row in body["rows"] for m in row.get("messages", ()))
    assert texts and "eather" not in texts and "ummary" not in texts


def test_another_tenant_s_run_and_a_missing_snapshot_are_404s(client, run, other_tenant, key):
    _, foreign_key = create_api_key(other_tenant, "server")
    for path in (f"/api/v1/runs/{run.run_id}/snapshots", f"/api/v1/runs/{run.run_id}/snapshots/diff"):
        foreign = _get(client, path, foreign_key, to=1)
        missing = _get(client, path.replace(run.run_id, "r-none"), foreign_key, to=1)
        assert foreign.status_code == missing.status_code == 404
        assert foreign.json()["error"] == missing.json()["error"].replace("r-none", run.run_id)
    gone = _get(client, f"/api/v1/runs/{run.run_id}/snapshots/diff", key, to=9999)
    assert gone.status_code == 404 and "no snapshot 9999" in gone.json()["error"]


@pytest.mark.parametrize(
    ("params", "problem"),
    [
        ({}, "'to' is required"),
        ({"to": "x"}, "'to' must be a whole number"),
        ({"to": "1", "from": "-1"}, "'from' must be a whole number"),
        ({"to": str(2**40)}, "'to' must be a whole number"),
        ({"to": "1", "from": "1"}, "name the same snapshot"),
    ],
)
def test_bad_diff_input_is_a_400_naming_it(client, run, key, params, problem):
    response = _get(client, f"/api/v1/runs/{run.run_id}/snapshots/diff", key, **params)
    assert response.status_code == 400 and problem in response.json()["error"]


def test_a_bad_cursor_is_a_400(client, run, key):
    response = _get(client, f"/api/v1/runs/{run.run_id}/snapshots", key, cursor="x1")
    assert response.status_code == 400 and "not valid" in response.json()["error"]
