"""Two processes (gunicorn workers) taking a conversation's writes in turns: a process whose kept fold another
process moved past folds in the snapshots it missed (`store._catch_up`) instead of recovering the conversation from
scratch, and the transcript stays the one recovery from scratch gives; when they cannot be folded on (out of
recovery order, too many, rows that differ), it recovers from scratch as before."""

import random
from collections import OrderedDict

import pytest

from sessions_app.ingest.payloads import parse_snapshot
from sessions_app.ingest.service import ingest_snapshots
from sessions_app.models import Conversation, TranscriptEntry
from sessions_app.transcripts import fold_cache, store
from tests.factories import make_tenant
from tests.scenarios import SCENARIO_NAMES
from tests.sessions_app.ingest.test_ingest_incremental import (
    STRESS_SEEDS,
    assert_equals_scratch,
    ingest_one_by_one,
    scenario_payloads,
    stress_payloads,
)
from tests.sessions_app.ingest.test_ingest_incremental import rebuilds as rebuilds_fixture

rebuilds = pytest.fixture(rebuilds_fixture.__wrapped__, name="rebuilds")

pytestmark = pytest.mark.django_db


def ingest_on_two_workers(tenant, payloads, workers, capture, monkeypatch):
    """Each payload ingested by the worker `workers` names, each worker with the folds only it kept."""
    caches: dict[int, OrderedDict] = {0: OrderedDict(), 1: OrderedDict()}
    for payload, worker in zip(payloads, workers, strict=True):
        monkeypatch.setattr(fold_cache, "_kept", caches[worker])
        ingest_one_by_one(tenant, [payload], capture)
    monkeypatch.setattr(fold_cache, "_kept", OrderedDict())


@pytest.mark.parametrize("name", SCENARIO_NAMES)
def test_every_scenario_on_two_workers_in_turns_folds_on_and_equals_scratch(
    name, rebuilds, django_capture_on_commit_callbacks, monkeypatch
):
    tenant = make_tenant()
    payloads = scenario_payloads(name)
    workers = [n % 2 for n in range(len(payloads))]
    ingest_on_two_workers(tenant, payloads, workers, django_capture_on_commit_callbacks, monkeypatch)
    # The second worker's first write recovers (it kept nothing); after that each catches up on the other's.
    assert len(rebuilds) <= 1
    assert_equals_scratch(tenant, payloads[0]["conversation_id"])


@pytest.mark.parametrize("seed", range(STRESS_SEEDS))
def test_stress_conversations_on_two_workers_equal_scratch(
    seed, rebuilds, django_capture_on_commit_callbacks, monkeypatch
):
    payloads = stress_payloads(seed)
    conversation_id = payloads[0]["conversation_id"]
    chance = random.Random(seed)
    for arrival in (payloads, chance.sample(payloads, len(payloads))):
        tenant = make_tenant()
        workers = [chance.randrange(2) for _ in arrival]
        ingest_on_two_workers(tenant, arrival, workers, django_capture_on_commit_callbacks, monkeypatch)
        assert_equals_scratch(tenant, conversation_id)


def test_more_snapshots_missed_than_the_bound_recover_from_scratch(
    rebuilds, django_capture_on_commit_callbacks, monkeypatch
):
    monkeypatch.setattr(store, "CATCH_UP_SNAPSHOTS", 1)
    tenant = make_tenant()
    payloads = scenario_payloads("plain_tools")
    assert len(payloads) >= 4
    workers = [0, 1, 1, 0, *([0] * (len(payloads) - 4))]  # worker 0 missed two snapshots
    ingest_on_two_workers(tenant, payloads, workers, django_capture_on_commit_callbacks, monkeypatch)
    assert len(rebuilds) == 2  # worker 1's first write, and worker 0 two behind
    assert_equals_scratch(tenant, payloads[0]["conversation_id"])


def test_a_fold_that_would_not_give_the_rows_written_recovers_from_scratch(
    rebuilds, django_capture_on_commit_callbacks, monkeypatch
):
    tenant = make_tenant()
    payloads = scenario_payloads("plain_tools")
    conversation_id = payloads[0]["conversation_id"]
    caches = {0: OrderedDict(), 1: OrderedDict()}
    monkeypatch.setattr(fold_cache, "_kept", caches[0])
    ingest_one_by_one(tenant, payloads[:2], django_capture_on_commit_callbacks)
    monkeypatch.setattr(fold_cache, "_kept", caches[1])
    ingest_one_by_one(tenant, payloads[2:3], django_capture_on_commit_callbacks)
    # A row the other worker wrote for its snapshot is not what folding that snapshot gives.
    conversation = Conversation.objects.get(tenant=tenant, external_id=conversation_id)
    rows = TranscriptEntry.objects.filter(tenant=tenant, conversation=conversation, summary_artifact=False)
    first, last = rows.order_by("position").first(), rows.order_by("-position").first()
    TranscriptEntry.objects.filter(tenant=tenant, pk=last.pk).update(message_id=first.message_id)
    rebuilds.clear()
    monkeypatch.setattr(fold_cache, "_kept", caches[0])
    ingest_one_by_one(tenant, payloads[3:4], django_capture_on_commit_callbacks)
    assert rebuilds == [conversation_id]
    monkeypatch.setattr(fold_cache, "_kept", OrderedDict())
    assert_equals_scratch(tenant, conversation_id)


def test_one_write_of_several_conversations_catches_them_up_together(
    rebuilds, django_capture_on_commit_callbacks, monkeypatch
):
    """An export of several runs (BatchSpanProcessor) writes several conversations at once: the worker behind on
    all of them folds each on, from one read of their snapshots, messages and rows, and each equals scratch."""
    threads = [scenario_payloads(name) for name in SCENARIO_NAMES[:3]] + [stress_payloads(0)]
    caught_together = []
    catch_up_all = store._catch_up_all

    def counted(behind, ours):
        caught = catch_up_all(behind, ours)
        caught_together.append(len(caught))
        return caught

    monkeypatch.setattr(store, "_catch_up_all", counted)
    tenant = make_tenant()
    caches: dict[int, OrderedDict] = {0: OrderedDict(), 1: OrderedDict()}
    for step in range(max(map(len, threads))):
        monkeypatch.setattr(fold_cache, "_kept", caches[step % 2])
        batch = [parse_snapshot(thread[step]) for thread in threads if step < len(thread)]
        with django_capture_on_commit_callbacks(execute=True):
            ingest_snapshots(tenant, batch, source="server", via="api")
    monkeypatch.setattr(fold_cache, "_kept", OrderedDict())
    assert max(caught_together) == len(threads)  # a write behind on every conversation caught all of them up
    assert len(rebuilds) <= len(threads)  # only the second worker's first write of each conversation recovers
    for thread in threads:
        assert_equals_scratch(tenant, thread[0]["conversation_id"])
