"""Ingestion folds a snapshot that comes next in recovery order into the conversation's kept recovery and writes
only what changed; the transcript it leaves is the one recovery from scratch gives, whatever the arrival order."""

import os
import random

import pytest
from django.db import transaction
from pydantic_ai_harness.step_persistence import InMemoryStepStore

from sessions_app.demo.scenarios import store_as_payloads
from sessions_app.ingest.payloads import parse_snapshot
from sessions_app.ingest.service import ingest_snapshots
from sessions_app.models import Conversation
from sessions_app.transcripts import fold_cache, store
from tests.factories import make_tenant
from tests.scenarios import SCENARIO_NAMES, new_store, run_plan, run_scenario, stress_plan
from tests.sessions_app.ingest.transcripts import transcript_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def rebuilds(monkeypatch):
    """Counts recoveries from scratch; kept folds start empty."""
    fold_cache.forget_all()
    calls = []
    scratch = store.rebuild_transcript

    def counted(conversation, known=None, prices=None):
        calls.append(conversation.external_id)
        return scratch(conversation, known, prices)

    monkeypatch.setattr(store, "rebuild_transcript", counted)
    return calls


def ingest_one_by_one(tenant, payloads, django_capture_on_commit_callbacks):
    for payload in payloads:
        with django_capture_on_commit_callbacks(execute=True):
            ingest_snapshots(tenant, [parse_snapshot(payload)], source="server", via="api")


def assert_equals_scratch(tenant, conversation_id):
    incremental = transcript_of(tenant, conversation_id)
    conversation = Conversation.objects.get(tenant=tenant, external_id=conversation_id)
    count = conversation.message_count
    fold_cache.forget_all()
    store.rebuild_transcript(conversation)  # rewrites from the first row that differs: none, if equal
    assert transcript_of(tenant, conversation_id) == incremental
    assert conversation.message_count == count


def scenario_payloads(name):
    harness_store = new_store(name)
    run_scenario(name, harness_store, conversation_id=f"conv-{name}")
    return store_as_payloads(harness_store)


def stress_payloads(seed):
    harness_store = InMemoryStepStore()
    run_plan(stress_plan(seed), harness_store, conversation_id=f"stress-{seed}", with_truth=False)
    return store_as_payloads(harness_store)


@pytest.mark.parametrize("name", SCENARIO_NAMES)
def test_every_scenario_in_write_order_never_recovers_from_scratch(name, rebuilds, django_capture_on_commit_callbacks):
    tenant = make_tenant()
    payloads = scenario_payloads(name)
    ingest_one_by_one(tenant, payloads, django_capture_on_commit_callbacks)
    assert rebuilds == []  # a new conversation starts from an empty fold; every later snapshot is folded in
    assert_equals_scratch(tenant, payloads[0]["conversation_id"])


@pytest.mark.parametrize("name", SCENARIO_NAMES)
def test_every_scenario_in_shuffled_arrival_order(name, rebuilds, django_capture_on_commit_callbacks):
    tenant = make_tenant()
    payloads = scenario_payloads(name)
    random.Random(name).shuffle(payloads)
    ingest_one_by_one(tenant, payloads, django_capture_on_commit_callbacks)
    assert_equals_scratch(tenant, payloads[0]["conversation_id"])


# 24 in every run; SESSIONDESK_STRESS_SEEDS=300 for the full property run (docs/BENCHMARKS.md says when it last ran).
STRESS_SEEDS = int(os.environ.get("SESSIONDESK_STRESS_SEEDS", "24"))


@pytest.mark.parametrize("seed", range(STRESS_SEEDS))
def test_stress_conversations_in_write_and_shuffled_order(seed, rebuilds, django_capture_on_commit_callbacks):
    payloads = stress_payloads(seed)
    conversation_id = payloads[0]["conversation_id"]
    for arrival in (payloads, random.Random(seed).sample(payloads, len(payloads))):
        tenant = make_tenant()
        ingest_one_by_one(tenant, arrival, django_capture_on_commit_callbacks)
        assert_equals_scratch(tenant, conversation_id)


def test_a_fold_another_process_moved_past_folds_on_from_its_snapshots(rebuilds, django_capture_on_commit_callbacks):
    tenant = make_tenant()
    payloads = scenario_payloads("plain_tools")
    conversation_id = payloads[0]["conversation_id"]
    ingest_one_by_one(tenant, payloads[:2], django_capture_on_commit_callbacks)
    conversation = Conversation.objects.get(tenant=tenant, external_id=conversation_id)
    stale = fold_cache.take(conversation)  # this process's fold after two snapshots
    assert stale is not None
    # Another process (with no fold of its own) stores the third.
    ingest_one_by_one(tenant, payloads[2:3], django_capture_on_commit_callbacks)
    fold_cache.forget_all()
    with django_capture_on_commit_callbacks(execute=True):
        fold_cache.keep_after_commit(conversation, stale)  # back in this process, whose fold missed the third
    rebuilds.clear()
    ingest_one_by_one(tenant, payloads[3:], django_capture_on_commit_callbacks)
    # The third is folded onto the stale fold (tests/sessions_app/ingest/test_fold_catch_up.py), not recovered.
    assert rebuilds == []
    assert_equals_scratch(tenant, conversation_id)


def test_the_batches_of_one_transaction_go_on_from_each_other(rebuilds):
    """An import writes a file in one transaction, a chunk at a time: a chunk folds onto the one before it."""
    tenant = make_tenant()
    payloads = scenario_payloads("threaded_summarizing")
    with transaction.atomic():
        for payload in payloads:
            ingest_snapshots(tenant, [parse_snapshot(payload)], source="server", via="api")
    assert rebuilds == []
    assert_equals_scratch(tenant, payloads[0]["conversation_id"])


class RolledBack(Exception):
    pass


def test_a_fold_rolled_back_with_its_rows_is_not_gone_on_from(rebuilds):
    tenant = make_tenant()
    payloads = scenario_payloads("plain_tools")
    conversation_id = payloads[0]["conversation_id"]
    with transaction.atomic():
        ingest_snapshots(tenant, [parse_snapshot(p) for p in payloads[:2]], source="server", via="api")
        with pytest.raises(RolledBack), transaction.atomic():
            ingest_snapshots(tenant, [parse_snapshot(payloads[2])], source="server", via="api")
            raise RolledBack  # the third snapshot's rows are gone; the fold that holds it must go too
        for payload in payloads[2:]:
            ingest_snapshots(tenant, [parse_snapshot(payload)], source="server", via="api")
    assert rebuilds[:1] == [conversation_id]
    assert_equals_scratch(tenant, conversation_id)
