"""The one code path for tenant scoping: every query on tenant data starts here.

Helpers here only ever narrow a queryset to a tenant; anything outside it is indistinguishable from
something that does not exist (404).
"""

from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import CommandError
from django.db.models import Model, QuerySet
from django.http import Http404

from sessions_app.models import ApiKey, Run, Snapshot, Source, Tenant


def scoped[M: Model](model: type[M], tenant: Tenant) -> QuerySet[M]:
    """All rows of `model` that belong to `tenant`."""
    return model._default_manager.filter(tenant=tenant)


def runs_with_conversation(tenant: Tenant) -> QuerySet[Run]:
    """The tenant's runs, each read with its conversation and tenant in the same query.

    The join names the conversation's tenant as well as the run's: on Citus it then routes to the tenant's one shard;
    by id alone it is a repartition join, which Citus refuses once the tenant table was read in the transaction.
    """
    return scoped(Run, tenant).filter(conversation__tenant=tenant).select_related("conversation", "tenant")


def conversations_readable_by(key: ApiKey | None) -> QuerySet[Snapshot, int] | None:
    """The primary keys of the conversations `key` may read (a subquery), or None for all of its tenant's.

    A server key (or none: the dashboard, commands, in-process agents) reads its whole tenant. A client key is
    browser-facing, so it reads only conversations holding a snapshot it wrote itself: holding one is the
    only proof of its writer the store keeps (a principal a browser names proves nothing).
    """
    if key is None or key.kind != Source.CLIENT:
        return None
    return (
        scoped(Snapshot, key.tenant)
        .filter(api_key=key, run__tenant=key.tenant)
        .values_list("run__conversation_id", flat=True)
        .distinct()
    )


def get_scoped_or_404[M: Model](model: type[M], tenant: Tenant, **lookup: object) -> M:
    """One row of `tenant`, or 404 exactly as for a row that does not exist."""
    try:
        return scoped(model, tenant).get(**lookup)
    except ObjectDoesNotExist:  # what .get() raises here: model.DoesNotExist
        raise Http404(f"No {model._meta.verbose_name} matches the given query.") from None


def tenant_for_command(slug: str) -> Tenant:
    """The tenant a management command's --tenant names, or the command's error saying there is none."""
    tenant = Tenant.objects.filter(slug=slug).first()
    if tenant is None:
        raise CommandError(f"No tenant {slug!r}.")
    return tenant
