"""Small template filters for the dashboard's badges."""

from django import template

from sessions_app.audit.gates import short_principal

register = template.Library()

_TONES = {"READY": "ok", "WAITING": "warn", "MISSING OUTCOME RECEIPT": "warn"}
_STATE_TONES = {"interrupted": "bad", "running": "info"}


@register.filter
def verdict_tone(verdict: str) -> str:
    """The badge colour of a verdict: green when fit to replay, amber when waiting on proof, red otherwise."""
    return _TONES.get(verdict, "bad")


@register.filter
def state_tone(state: str) -> str:
    return _STATE_TONES.get(state, "plain")


@register.filter
def principal(principal_hash: str) -> str:
    """A principal as shown: the first digits of its keyed hash (the principal itself is never stored)."""
    return short_principal(principal_hash)


@register.filter
def percent(fraction: float | None) -> str:
    """A share as shown in the overview: "12.5 %", or a dash when there was nothing to share."""
    return "—" if fraction is None else f"{fraction * 100:.1f} %"


@register.filter
def count(value: float) -> str:
    """A chart tick or value with thousands separators and no needless decimals."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


@register.filter
def get_place(places: dict, pk: int) -> object:
    """The entry of a dict keyed by row id (templates cannot index by a variable)."""
    return places.get(pk)
