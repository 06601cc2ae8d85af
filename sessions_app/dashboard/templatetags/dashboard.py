"""Small template filters for the dashboard's badges."""

from django import template
from django.http import HttpRequest
from django.utils.safestring import SafeString

from sessions_app.audit.gates import short_principal
from sessions_app.audit.vocabulary import tone_of
from sessions_app.dashboard import overview_html
from sessions_app.dashboard.bar_charts import BarChart
from sessions_app.dashboard.overview import Table
from sessions_app.dashboard.saved_views import NavView, nav_views

register = template.Library()

_STATE_TONES = {"interrupted": "bad", "running": "info"}


@register.filter
def verdict_tone(verdict: str) -> str:
    """The badge class of a verdict, from the vocabulary's table (an unknown one is shown as grave)."""
    return tone_of(verdict)


@register.filter
def state_tone(state: str) -> str:
    return _STATE_TONES.get(state, "plain")


@register.filter
def principal(principal_hash: str) -> str:
    """A principal as shown: the first digits of its keyed hash (the principal itself is never stored)."""
    return short_principal(principal_hash)


@register.filter
def percent(fraction: float | None) -> str:
    return overview_html.percent(fraction)


@register.filter
def count(value: float) -> str:
    """A total with thousands separators and no needless decimals."""
    return overview_html.number(value)


@register.simple_tag
def svg_chart(chart: BarChart, chart_id: str, title: str) -> SafeString:
    return overview_html.svg_chart(chart, chart_id, title)


@register.simple_tag
def number_table(table_id: str, table: Table) -> SafeString:
    return overview_html.number_table(table_id, table.headers, table.rows)


@register.filter
def get_place(places: dict[int, object], pk: int) -> object:
    """The entry of a dict keyed by row id (templates cannot index by a variable)."""
    return places.get(pk)


@register.simple_tag
def saved_views_nav(request: HttpRequest) -> list[NavView]:
    """The current tenant's saved views for the navigation (none before `member_view` set a tenant)."""
    tenant = getattr(request, "tenant", None)
    return nav_views(tenant, request) if tenant is not None else []
