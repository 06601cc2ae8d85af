"""The returned hits, and only those: provenance, masked snippet and highlight, after ranking and paging."""

from collections.abc import Sequence

from masking import Pattern, compile_rules, redact
from search_app.errors import SearchError
from search_app.models import SearchDocument
from search_app.query import ParsedQuery
from search_app.ranking.protocol import Ranked
from search_app.results import SearchHit
from search_app.snippets import make_snippet
from sessions_app.models import Tenant


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


def hits(ranked: Ranked, parsed: ParsedQuery, tenants: Sequence[Tenant]) -> list[SearchHit]:
    """Provenance, redacted snippet and highlight for the returned hits only."""
    if not ranked:
        return []
    # One query for the hits' provenance and text; every joined table names the tenants too (docs/SCALING.md).
    tenant_ids = [tenant.id for tenant in tenants]
    rows = SearchDocument.objects.filter(
        tenant_id__in=tenant_ids,
        id__in=[key for key, _ in ranked],
        entry__tenant_id__in=tenant_ids,
        conversation__tenant_id__in=tenant_ids,
        run__tenant_id__in=tenant_ids,
    ).values_list(
        "id",
        "entry_id",
        "tenant_id",
        "conversation_id",
        "conversation__external_id",
        "run__run_id",
        "position",
        "role",
        "timestamp",
        "agent_name",
        "entry__text",
        "entry__recovered_from_compaction",
    )
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
