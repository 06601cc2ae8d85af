"""Reading the audit's stored verdicts (RunVerdict) for lists and filters; the audit itself is sessions_app.audit."""

from collections.abc import Sequence

from django.db.models import Exists, OuterRef, QuerySet

from sessions_app.audit.vocabulary import ALL_VERDICTS
from sessions_app.models import Conversation, Tenant
from sessions_app.models.audit import RunVerdict
from sessions_app.tenancy.scoping import scoped


def verdict_choices() -> list[str]:
    return [verdict.value for verdict in ALL_VERDICTS]


def verdicts_for_runs(tenant: Tenant, run_pks: Sequence[int]) -> dict[int, str]:
    if not run_pks:
        return {}
    return dict(scoped(RunVerdict, tenant).filter(run_id__in=list(run_pks)).values_list("run_id", "verdict"))


def narrow_conversations(
    qs: QuerySet[Conversation], tenant: Tenant, *, verdict: str = "", has_repairs: bool = False
) -> QuerySet[Conversation]:
    """Only conversations with a run of `verdict` and/or a run with a tool-pairing repair (only narrows)."""
    # The run is named by tenant too: Citus plans a join of two distributed tables only within one tenant.
    verdicts = scoped(RunVerdict, tenant).filter(run__tenant=tenant, run__conversation=OuterRef("pk"))
    if verdict:
        qs = qs.filter(Exists(verdicts.filter(verdict=verdict)))
    if has_repairs:
        qs = qs.filter(Exists(verdicts.filter(repair_count__gt=0)))
    return qs
