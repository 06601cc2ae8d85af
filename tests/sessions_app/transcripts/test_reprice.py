"""`manage.py reprice` (sessions_app.transcripts.reprice): after a tenant's negotiated prices change, its stored
runs and conversations cost what its current prices say, as a recomputation from scratch would; a model with no
price stays "no price"; a second run changes nothing; an unknown tenant changes nothing; `--all` reprices each
tenant at its own prices; the number of queries does not grow with the number of conversations."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from sessions_app.ingest.payloads import parse_snapshot
from sessions_app.ingest.service import ingest_snapshots
from sessions_app.models import Conversation, Run, TranscriptEntry
from sessions_app.transcripts import fold_cache, list_columns
from sessions_app.transcripts.prices import format_cost
from tests.factories import make_tenant
from tests.rowcounts import row_counts
from tests.sessions_app.ingest.test_ingest_incremental import scenario_payloads

pytestmark = pytest.mark.django_db

MODEL = "scenario-model"  # the scenarios' model: genai-prices has no price for it
NEGOTIATED = {MODEL: {"input": "2.5", "output": "10"}}


def _ingest(tenant, copies: int = 2) -> None:
    """`copies` conversations of the plain_tools scenario (tool calls, several runs) into the tenant."""
    payloads = scenario_payloads("plain_tools")
    for copy in range(copies):
        batch = [
            parse_snapshot(
                {**p, "conversation_id": f"{p['conversation_id']}-{copy}", "run_id": f"{p['run_id']}-{copy}"}
                | ({"parent_run_id": f"{p['parent_run_id']}-{copy}"} if p.get("parent_run_id") else {})
            )
            for p in payloads
        ]
        ingest_snapshots(tenant, batch, source="server", via="api")


def _reprice(*args: str) -> str:
    out = StringIO()
    call_command("reprice", *args, stdout=out)
    return out.getvalue()


def _costs(tenant) -> dict:
    """Every cost column of the tenant's conversations and runs, by external id."""
    fields = ("cost_micro_usd", "unpriced_steps", "model_step_count")
    return {
        "conversations": {
            c["external_id"]: c for c in Conversation.objects.filter(tenant=tenant).values("external_id", *fields)
        },
        "runs": {r["run_id"]: r for r in Run.objects.filter(tenant=tenant).values("run_id", *fields)},
    }


def _set_prices(tenant, overrides) -> None:
    tenant.price_overrides = overrides
    tenant.save(update_fields=["price_overrides"])


def _negotiated_cost(tenant, conversation) -> int:
    """What the conversation's responses cost at NEGOTIATED, in millionths of a dollar, from the stored facts."""
    responses = [
        e.facts
        for e in TranscriptEntry.objects.filter(tenant=tenant, conversation=conversation, summary_artifact=False)
        if e.facts.get("kind") == "response"
    ]
    tokens_in = sum(f.get("usage", {}).get("input_tokens", 0) for f in responses)
    tokens_out = sum(f.get("usage", {}).get("output_tokens", 0) for f in responses)
    return round(tokens_in * 2.5 + tokens_out * 10)


def _scratch_columns(tenant) -> dict:
    """The tenant's columns after `list_columns.recompute_conversation` of every conversation (then put back)."""
    fold_cache.forget_all()
    for conversation in Conversation.objects.filter(tenant=tenant):
        list_columns.recompute_conversation(conversation, list_columns.tenant_prices(tenant.pk))
    return _costs(tenant)


def test_a_changed_negotiated_price_reprices_old_runs_as_a_recomputation_would():
    tenant = make_tenant("acme")
    _ingest(tenant)
    before = _costs(tenant)
    assert all(c["unpriced_steps"] == c["model_step_count"] > 0 for c in before["conversations"].values())

    _set_prices(tenant, NEGOTIATED)
    assert _costs(tenant) == before  # a price change alone moves no stored cost

    assert _reprice("--tenant", "acme") == "acme: 2 conversations repriced, 2 changed\n"
    after = _costs(tenant)
    for conversation in Conversation.objects.filter(tenant=tenant):
        row = after["conversations"][conversation.external_id]
        assert row["unpriced_steps"] == 0
        assert row["cost_micro_usd"] == _negotiated_cost(tenant, conversation) > 0
        runs = Run.objects.filter(tenant=tenant, conversation=conversation).values_list("cost_micro_usd", flat=True)
        assert sum(runs) == row["cost_micro_usd"]
    assert after == _scratch_columns(tenant)


def test_a_second_run_changes_nothing():
    tenant = make_tenant("acme")
    _ingest(tenant)
    _set_prices(tenant, NEGOTIATED)
    _reprice("--tenant", "acme")
    repriced = _costs(tenant)
    assert _reprice("--tenant", "acme") == "acme: 2 conversations repriced, 0 changed\n"
    assert _costs(tenant) == repriced


def test_no_price_stays_no_price_never_zero():
    tenant = make_tenant("acme")
    _ingest(tenant)
    assert _reprice("--tenant", "acme") == "acme: 2 conversations repriced, 0 changed\n"
    _set_prices(tenant, NEGOTIATED)
    _reprice("--tenant", "acme")
    _set_prices(tenant, {})  # the negotiated price withdrawn: back to genai-prices, which has none
    assert _reprice("--tenant", "acme") == "acme: 2 conversations repriced, 2 changed\n"
    for row in [*_costs(tenant)["conversations"].values(), *_costs(tenant)["runs"].values()]:
        assert row["cost_micro_usd"] == 0 and row["unpriced_steps"] == row["model_step_count"]
        if row["model_step_count"]:
            assert format_cost(row["cost_micro_usd"], row["unpriced_steps"], row["model_step_count"]) == "no price"


def test_an_unknown_tenant_is_named_and_nothing_changes():
    tenant = make_tenant("acme")
    _ingest(tenant)
    _set_prices(tenant, NEGOTIATED)
    counts, costs = row_counts(), _costs(tenant)
    with pytest.raises(CommandError, match="No tenant with slug 'acmee'"):
        _reprice("--tenant", "acmee")
    assert row_counts() == counts
    assert _costs(tenant) == costs


@pytest.mark.parametrize(
    ("args", "problem"),
    [((), "Say which tenants to reprice: --tenant SLUG or --all."), (("--tenant", "a", "--all"), "not both")],
)
def test_exactly_one_of_tenant_or_all(args, problem):
    with pytest.raises(CommandError, match=problem):
        _reprice(*args)


def test_all_reprices_each_tenant_at_its_own_prices():
    acme, globex = make_tenant("acme"), make_tenant("globex")
    _ingest(acme)
    _ingest(globex)  # the same conversation ids in another tenant
    _set_prices(acme, NEGOTIATED)
    globex_before = _costs(globex)

    assert _reprice("--all") == (
        "acme: 2 conversations repriced, 2 changed\nglobex: 2 conversations repriced, 0 changed\n"
    )
    assert all(c["unpriced_steps"] == 0 and c["cost_micro_usd"] > 0 for c in _costs(acme)["conversations"].values())
    assert _costs(globex) == globex_before  # acme's negotiated price does not leak into globex
    assert all(c["unpriced_steps"] == c["model_step_count"] for c in _costs(globex)["conversations"].values())

    _set_prices(globex, {MODEL: {"input": "1", "output": "1"}})
    _reprice("--all")
    acme_costs = {k: c["cost_micro_usd"] for k, c in _costs(acme)["conversations"].items()}
    globex_costs = {k: c["cost_micro_usd"] for k, c in _costs(globex)["conversations"].items()}
    assert acme_costs.keys() == globex_costs.keys()
    assert all(acme_costs[k] > globex_costs[k] > 0 for k in acme_costs)  # each at its own price


def _queries_to_reprice(conversations: int) -> int:
    tenant = make_tenant()
    _ingest(tenant, copies=conversations)
    _set_prices(tenant, NEGOTIATED)
    with CaptureQueriesContext(connection) as queries:
        _reprice("--tenant", tenant.slug)
    assert _costs(tenant)["conversations"] and all(
        c["unpriced_steps"] == 0 for c in _costs(tenant)["conversations"].values()
    )
    return len(queries)


def test_the_query_count_does_not_grow_with_the_conversations():
    assert _queries_to_reprice(10) == _queries_to_reprice(100)
