"""The list columns kept at ingest (sessions_app.transcripts.list_columns) are what the stored transcript, runs and
verdicts add up to, whatever order the snapshots arrive in: compared with a recomputation from scratch."""

import random

import pytest

from sessions_app.ingest.payloads import parse_snapshot
from sessions_app.ingest.service import ingest_snapshots
from sessions_app.models import Conversation, Run, TranscriptEntry
from sessions_app.transcripts import fold_cache, list_columns
from sessions_app.transcripts.usage_totals import Totals
from tests.factories import make_tenant
from tests.scenarios import SCENARIO_NAMES
from tests.sessions_app.ingest.test_ingest_incremental import scenario_payloads, stress_payloads

pytestmark = pytest.mark.django_db

COLUMNS = [
    *Totals.column_names(),
    "first_user_text",
    "last_activity_at",
    "run_count",
    "duration_ms",
    "worst_verdict",
    "worst_verdict_rank",
]


def _model_names(payloads) -> set[str]:
    return {m["model_name"] for p in payloads for m in p["messages"] if m.get("kind") == "response"}


def _columns(conversation_id: str) -> tuple[dict, list[dict]]:
    conversation = Conversation.objects.get(external_id=conversation_id)
    runs = Run.objects.filter(conversation=conversation).order_by("pk").values(*Totals.column_names(), "duration_ms")
    return {name: getattr(conversation, name) for name in COLUMNS}, list(runs)


def _kept_equals_scratch(tenant, payloads, django_capture_on_commit_callbacks) -> dict:
    for payload in payloads:
        with django_capture_on_commit_callbacks(execute=True):
            ingest_snapshots(tenant, [parse_snapshot(payload)], source="server", via="api")
    conversation_id = payloads[0]["conversation_id"]
    kept = _columns(conversation_id)
    fold_cache.forget_all()
    list_columns.recompute_conversation(
        Conversation.objects.get(external_id=conversation_id), list_columns.tenant_prices(tenant.pk)
    )
    assert kept == _columns(conversation_id)
    return kept[0]


def _priced_tenant(payloads):
    tenant = make_tenant()
    tenant.price_overrides = {name: {"input": "2.5", "output": "10"} for name in _model_names(payloads)}
    tenant.save()
    return tenant


@pytest.mark.parametrize("name", SCENARIO_NAMES)
def test_every_scenario_keeps_its_columns_in_write_and_shuffled_order(name, django_capture_on_commit_callbacks):
    payloads = scenario_payloads(name)
    columns = _kept_equals_scratch(_priced_tenant(payloads), payloads, django_capture_on_commit_callbacks)
    assert columns["run_count"] == len({p["run_id"] for p in payloads})
    assert columns["model_step_count"] > 0 and columns["unpriced_steps"] == 0
    shuffled = random.Random(name).sample(payloads, len(payloads))
    Conversation.objects.all().delete()
    fold_cache.forget_all()
    # (Within a run, recovery reads snapshots in write order, so another arrival order may recover another
    # transcript: each order is compared with its own recomputation.)
    _kept_equals_scratch(_priced_tenant(payloads), shuffled, django_capture_on_commit_callbacks)


@pytest.mark.parametrize("seed", range(6))
def test_stress_conversations_keep_their_columns(seed, django_capture_on_commit_callbacks):
    payloads = random.Random(seed).sample(stress_payloads(seed), len(stress_payloads(seed)))
    _kept_equals_scratch(make_tenant(), payloads, django_capture_on_commit_callbacks)


def test_the_columns_say_what_the_transcript_holds(django_capture_on_commit_callbacks):
    payloads = scenario_payloads("plain_tools")
    tenant = _priced_tenant(payloads)
    columns = _kept_equals_scratch(tenant, payloads, django_capture_on_commit_callbacks)
    entries = TranscriptEntry.objects.filter(tenant=tenant, summary_artifact=False)
    responses = [e.facts for e in entries if e.facts.get("kind") == "response"]
    tokens_in = sum(f.get("usage", {}).get("input_tokens", 0) for f in responses)
    tokens_out = sum(f.get("usage", {}).get("output_tokens", 0) for f in responses)
    assert columns["model_step_count"] == len(responses)
    assert columns["tool_call_count"] == sum(
        1 for f in responses for part in f["parts"] if part.get("part_kind") == "tool-call"
    )
    assert (columns["input_tokens"], columns["output_tokens"]) == (tokens_in, tokens_out)
    assert columns["total_tokens"] == tokens_in + tokens_out
    assert columns["cost_micro_usd"] == round(tokens_in * 2.5 + tokens_out * 10)  # per million, in millionths
    first_prompt = next(
        part["content"] for m in payloads[0]["messages"] for part in m["parts"] if part["part_kind"] == "user-prompt"
    )
    assert columns["first_user_text"] == " ".join(first_prompt.split())[:300]


def test_an_unknown_model_is_unpriced_not_free(django_capture_on_commit_callbacks):
    payloads = scenario_payloads("plain_tools")
    columns = _kept_equals_scratch(make_tenant(), payloads, django_capture_on_commit_callbacks)
    assert columns["cost_micro_usd"] == 0
    assert columns["unpriced_steps"] == columns["model_step_count"] > 0
