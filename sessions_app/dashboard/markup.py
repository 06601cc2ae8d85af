"""Escaping for the HTML that transcript, timeline and overview pages build in Python. Pure."""

from html import escape


def esc(text: object) -> str:
    """`text` as HTML text or an attribute value: &, <, >, " and ' esc."""
    return escape(str(text), quote=True)
