"""The returned hits, and only those: provenance, masked snippet and highlight, after ranking and paging."""

from collections.abc import Sequence
from datetime import UTC, datetime

from django.db import connection
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from masking import Pattern, compile_rules, redact
from search_app.backends.base import DOCS, ENTRIES
from search_app.errors import SearchError
from search_app.query import ParsedQuery
from search_app.ranking.protocol import Ranked
from search_app.results import SearchHit
from search_app.snippets import make_snippet
from sessions_app.models import Conversation, Run, Tenant

CONVERSATIONS = Conversation._meta.db_table
RUNS = Run._meta.db_table


def rules_by_tenant(tenants: Sequence[Tenant]) -> dict[int, tuple[Pattern, ...]]:
    """Each tenant's compiled masking patterns; `SearchError` when one does not compile."""
    rules = {}
    for tenant in tenants:
        try:
            rules[tenant.id] = compile_rules(tenant.redaction_patterns or [])
        except ValueError as error:
            # Fail closed: without the tenant's own rules nothing of its text may be shown.
            raise SearchError(f"Tenant {tenant.slug!r} has an unusable redaction pattern: {error}") from None
    return rules


def _aware(value: datetime | str | None) -> datetime | None:
    """A timestamp as the ORM gives it: aware, in UTC (SQLite keeps it naive, or as text)."""
    if value is None:
        return None
    moment = parse_datetime(value) if isinstance(value, str) else value
    if moment is None:
        return None
    return moment if timezone.is_aware(moment) else timezone.make_aware(moment, UTC)


def hits(ranked: Ranked, parsed: ParsedQuery, tenants: Sequence[Tenant]) -> list[SearchHit]:
    """Provenance, redacted snippet and highlight for the returned hits only."""
    if not ranked:
        return []
    # One statement for the hits' provenance and text, written out (the ORM's compilation of the same join cost
    # more than the statement itself); every joined table names the tenants too (docs/SCALING.md). The joins are
    # the ORM's, by key alone: joined on (tenant, key) too, a planner without statistics (a fresh table) nested
    # every entry of the tenants inside every conversation and run.
    tenant_ids = [tenant.id for tenant in tenants]
    keys = [key for key, _ in ranked]
    marks = ", ".join(["%s"] * len(tenant_ids))
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT d.id, d.entry_id, d.tenant_id, d.conversation_id, c.external_id, r.run_id, d.position, d.role, "  # noqa: S608 - constant tables, bound values
            f"d.timestamp, d.agent_name, e.text, e.recovered_from_compaction FROM {DOCS} d "
            f"JOIN {CONVERSATIONS} c ON c.id = d.conversation_id JOIN {ENTRIES} e ON e.id = d.entry_id "
            f"JOIN {RUNS} r ON r.id = d.run_id "
            f"WHERE d.tenant_id IN ({marks}) AND c.tenant_id IN ({marks}) AND r.tenant_id IN ({marks}) "
            f"AND e.tenant_id IN ({marks}) AND d.id IN ({', '.join(['%s'] * len(keys))})",
            [*tenant_ids * 4, *keys],
        )
        rows = [(*row[:8], _aware(row[8]), *row[9:]) for row in cursor.fetchall()]
    meta = {row[0]: row for row in rows}
    rules = rules_by_tenant(tenants)
    slugs = {t.id: t.slug for t in tenants}
    found = []
    for key, score in ranked:
        row = meta.get(key)
        if row is None:
            continue  # deleted since it was ranked
        head, dropped = row[:-1], row[-1]  # dropped: compaction took the message out of the agent's live history
        _, entry_id, tenant_id, conversation_pk, conversation_id, run_id, position, role, timestamp, agent, text = head
        snippet = make_snippet(redact(text, rules[tenant_id]), parsed)
        provenance = (conversation_pk, conversation_id, run_id, agent, position, role, timestamp)
        found.append(SearchHit(entry_id, slugs[tenant_id], *provenance, score, snippet.text, snippet.html, not dropped))
    return found
