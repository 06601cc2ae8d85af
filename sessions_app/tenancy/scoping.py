"""The one code path for tenant scoping: every query on tenant data starts here.

Helpers here only ever narrow a queryset to a tenant; anything outside it is indistinguishable from
something that does not exist (404).
"""

from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import CommandError
from django.db.models import Model, QuerySet
from django.http import Http404

from sessions_app.models import Tenant


def scoped[M: Model](model: type[M], tenant: Tenant) -> QuerySet[M]:
    """All rows of `model` that belong to `tenant`."""
    return model._default_manager.filter(tenant=tenant)


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
