"""Reprice a tenant's stored runs and conversations at its current prices (`manage.py reprice`, issue 26).

Ingest prices each model step once, with the negotiated prices the tenant had then
(sessions_app.transcripts.list_columns); after an admin changes them, old runs keep their cost until this runs.
It recomputes the cost columns (`cost_micro_usd`, `unpriced_steps`) of every run and conversation of a tenant
from its stored model responses, as `list_columns.recompute_conversation` would, but in bulk: a fixed number of
queries per tenant (the responses are streamed once; changed rows are written in chunks of `UPDATE_CHUNK`), not
a few per conversation. A model with no price stays unpriced ("no price", never 0).

One transaction per tenant: the tenant's SETTINGS lock is taken first (sessions_app.tenancy.tenant_locks: a price
save waits, and is not half applied; not a row lock on the tenant, which on Citus stalls every tenant's lockers),
then its conversations in the order ingest locks them (an ingest into one of them waits; no deadlock, no lost
increment; a conversation created meanwhile keeps the cost its ingest gave it). Only rows whose cost changed are
written, so a second run changes nothing.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from django.db import models, transaction
from django.db.models import Case, Value, When

from sessions_app.models import Conversation, Run, Tenant, TranscriptEntry
from sessions_app.tenancy.tenant_locks import TenantLock, lock_tenants
from sessions_app.transcripts.list_columns import tenant_prices
from sessions_app.transcripts.prices import NegotiatedPrice
from sessions_app.transcripts.usage_totals import row_totals

UPDATE_CHUNK = 500
# (cost_micro_usd, unpriced_steps): what `Totals` holds that depends on the prices.
Cost = tuple[int, int]
NO_COST: Cost = (0, 0)


class UnknownTenant(LookupError):
    def __init__(self, slug: str) -> None:
        super().__init__(f"No tenant with slug {slug!r}.")
        self.slug = slug


@dataclass(frozen=True)
class RepriceResult:
    tenant: str
    conversations: int
    changed: int

    def __str__(self) -> str:
        return f"{self.tenant}: {self.conversations} conversations repriced, {self.changed} changed"


def costs_by(
    responses: Iterable[tuple[int, int, Mapping[str, object]]], prices: Mapping[str, NegotiatedPrice]
) -> tuple[dict[int, Cost], dict[int, Cost]]:
    """Each run's and each conversation's cost from its model responses ((run pk, conversation pk, facts) each),
    priced as ingest prices them (`row_totals`). Pure."""
    runs: dict[int, Cost] = {}
    conversations: dict[int, Cost] = {}
    for run_pk, conversation_pk, facts in responses:
        totals = row_totals(facts, prices)
        step = (totals.cost_micro_usd, totals.unpriced_steps)
        for kept, key in ((runs, run_pk), (conversations, conversation_pk)):
            before = kept.get(key, NO_COST)
            kept[key] = (before[0] + step[0], before[1] + step[1])
    return runs, conversations


def changed_costs(stored: Mapping[int, Cost], computed: Mapping[int, Cost]) -> dict[int, Cost]:
    """The rows (of `stored`, pk to cost) whose computed cost differs; a row with no response costs nothing. Pure."""
    return {pk: computed.get(pk, NO_COST) for pk, cost in stored.items() if computed.get(pk, NO_COST) != cost}


def _write_costs(model: type[Run] | type[Conversation], tenant_id: int, costs: Mapping[int, Cost]) -> None:
    """One UPDATE per `UPDATE_CHUNK` rows, tenant-scoped, whatever the number of rows."""
    pks = sorted(costs)
    for start in range(0, len(pks), UPDATE_CHUNK):
        chunk = pks[start : start + UPDATE_CHUNK]
        model.objects.filter(tenant_id=tenant_id, pk__in=chunk).update(
            cost_micro_usd=Case(
                *(When(pk=pk, then=Value(costs[pk][0])) for pk in chunk), output_field=models.BigIntegerField()
            ),
            unpriced_steps=Case(
                *(When(pk=pk, then=Value(costs[pk][1])) for pk in chunk), output_field=models.PositiveIntegerField()
            ),
        )


def reprice_tenant(tenant: Tenant) -> RepriceResult:
    """Every run's and conversation's cost of this tenant at its current prices, in one transaction."""
    with transaction.atomic():
        # A prices change waits for the reprice, or the reprice for it and then reads the new prices.
        lock_tenants(TenantLock.SETTINGS, [tenant.pk])
        locked = Tenant.objects.get(pk=tenant.pk)
        prices = tenant_prices(locked)
        stored_conversations: dict[int, Cost] = {
            pk: (cost, unpriced)
            for pk, cost, unpriced in Conversation.objects.select_for_update()
            .filter(tenant_id=locked.pk)
            .order_by("external_id")
            .values_list("pk", "cost_micro_usd", "unpriced_steps")
        }
        stored_runs: dict[int, Cost] = {
            pk: (cost, unpriced)
            for pk, cost, unpriced in Run.objects.filter(tenant_id=locked.pk).values_list(
                "pk", "cost_micro_usd", "unpriced_steps"
            )
        }
        responses = (
            TranscriptEntry.objects.filter(tenant_id=locked.pk, summary_artifact=False, facts__kind="response")
            .values_list("run_id", "conversation_id", "facts")
            .iterator(chunk_size=2000)
        )
        run_costs, conversation_costs = costs_by(responses, prices)
        changed_conversations = changed_costs(stored_conversations, conversation_costs)
        _write_costs(Run, locked.pk, changed_costs(stored_runs, run_costs))
        _write_costs(Conversation, locked.pk, changed_conversations)
    return RepriceResult(locked.slug, len(stored_conversations), len(changed_conversations))


def reprice(slug: str | None = None) -> list[RepriceResult]:
    """Reprice the tenant with this slug, or every tenant (by slug) when none is given; UnknownTenant, before
    anything changes, for a slug no tenant has. One transaction per tenant."""
    if slug is None:
        tenants = list(Tenant.objects.order_by("slug"))
    else:
        tenants = list(Tenant.objects.filter(slug=slug))
        if not tenants:
            raise UnknownTenant(slug)
    return [reprice_tenant(tenant) for tenant in tenants]
