"""The one code path for tenant scoping: every query on tenant data starts here.

Helpers here only ever narrow a queryset to a tenant; anything outside it is indistinguishable from
something that does not exist (404).
"""

from django.db.models import Model, QuerySet
from django.http import Http404


def scoped[M: Model](model: type[M], tenant) -> QuerySet[M]:
    """All rows of `model` that belong to `tenant`."""
    return model._default_manager.filter(tenant=tenant)


def get_scoped_or_404[M: Model](model: type[M], tenant, **lookup) -> M:
    """One row of `tenant`, or 404 exactly as for a row that does not exist."""
    try:
        return scoped(model, tenant).get(**lookup)
    except model.DoesNotExist:
        raise Http404(f"No {model._meta.verbose_name} matches the given query.") from None
