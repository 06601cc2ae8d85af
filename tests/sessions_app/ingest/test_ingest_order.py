"""Snapshots are placed by their step, runs by their start and then by arrival: never by arrival of a step or
by the run's id. A late step changes what it changes, and the transcript ends equal to an in-order ingest."""

import json
import random

import pytest
from pydantic_ai_harness.step_persistence import InMemoryStepStore

from sessions_app.demo.scenarios import store_as_payloads
from sessions_app.ingest.payloads import parse_snapshot
from sessions_app.ingest.service import ingest_snapshots
from tests.factories import make_tenant
from tests.scenarios import run_scenario
from tests.sessions_app.ingest.transcripts import transcript_of

pytestmark = pytest.mark.django_db


def ingest_each(tenant, payloads):
    for payload in payloads:
        ingest_snapshots(tenant, [parse_snapshot(payload)], source="server", via="api")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_steps_of_one_run_posted_out_of_order_give_the_in_order_transcript(seed):
    store = InMemoryStepStore()
    result = run_scenario("sliding_window", store, conversation_id="conv-steps")
    payloads = store_as_payloads(store)
    assert len(payloads) >= 6 and len({p["run_id"] for p in payloads}) == 1
    in_order, shuffled = make_tenant(), make_tenant()
    ingest_each(in_order, payloads)
    arrival = list(payloads)
    random.Random(seed).shuffle(arrival)
    ingest_each(shuffled, arrival)

    assert transcript_of(shuffled, "conv-steps") == transcript_of(in_order, "conv-steps")
    assert len(transcript_of(in_order, "conv-steps")) == len(result.true_messages)


def without_run_stamps(payload: dict) -> dict:
    """As an application that stores messages without pydantic-ai's run ids (and sends no started_at)."""
    messages = json.loads(json.dumps(payload["messages"]))
    for message in messages:
        message.pop("run_id", None)
    return {**payload, "messages": messages, "run_id": payload["run_id"].replace("conv-thread-run-", "r")}


def test_threaded_runs_without_a_start_are_ordered_by_arrival_not_by_id():
    store = InMemoryStepStore()
    run_scenario("threaded_runs", store, conversation_id="conv-thread")
    payloads = [without_run_stamps(p) for p in store_as_payloads(store)]
    runs = list(dict.fromkeys(p["run_id"] for p in payloads))
    assert len(runs) >= 3
    # Ids that sort against arrival: the third run is "r10", which sorts before "r2".
    renamed = {run: name for run, name in zip(runs, ["r9", "r2", "r10", "r11", "r12"], strict=False)}
    payloads = [{**p, "run_id": renamed[p["run_id"]]} for p in payloads]
    tenant = make_tenant()
    ingest_each(tenant, payloads)

    order = list(dict.fromkeys(run for run, *_ in transcript_of(tenant, "conv-thread")))
    assert order == [renamed[run] for run in runs]
    shas = [sha for _, sha, _, artifact in transcript_of(tenant, "conv-thread") if not artifact]
    assert len(shas) == len(set(shas))  # nothing repeated
