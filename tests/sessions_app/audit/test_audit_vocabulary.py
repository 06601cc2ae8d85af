"""The verdict vocabulary is complete: every verdict has its label, tone, colour, event class and guidance in
its one row, the stylesheet draws it with exactly that colour, and no two verdicts look alike (light or dark)."""

import re
from pathlib import Path

import pytest
from django.utils.text import slugify

from sessions_app.audit.vocabulary import (
    VERDICTS,
    EventClass,
    Verdict,
    VerdictRow,
)

APP_CSS = Path(__file__).resolve().parents[3] / "static" / "css" / "app.css"
TONES = ("ok", "warn", "bad")


def _css() -> str:
    return APP_CSS.read_text()


def _fills(css: str) -> dict[str, str]:
    """Class selector → its fill, for every `selectors { fill: X; }` rule."""
    fills = {}
    without_comments = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    for selectors, value in re.findall(r"([^{}]+)\{\s*fill:\s*([^;]+);\s*\}", without_comments):
        for selector in selectors.split(","):
            fills[selector.strip()] = value.strip()
    return fills


def _variables(block: str) -> dict[str, tuple[int, int, int]]:
    return {
        name: (int(hex_[0:2], 16), int(hex_[2:4], 16), int(hex_[4:6], 16))
        for name, hex_ in re.findall(r"--([\w-]+):\s*#([0-9a-fA-F]{6});", block)
    }


def _schemes(css: str) -> dict[str, dict[str, tuple[int, int, int]]]:
    """The theme variables in light mode, and in dark mode (the light ones overridden)."""
    light = _variables(css.split("@media (prefers-color-scheme: dark)")[0])
    dark_block = re.search(r"@media \(prefers-color-scheme: dark\)\s*\{\s*:root\s*\{([^}]*)\}", css)
    assert dark_block, "app.css has no dark-mode :root block"
    return {"light": light, "dark": {**light, **_variables(dark_block.group(1))}}


def _resolve(colour: str, variables: dict[str, tuple[int, int, int]]) -> tuple[int, ...]:
    """The sRGB a colour of the forms the stylesheet uses computes to: var(--x), or a color-mix of two vars."""
    plain = re.fullmatch(r"var\(--([\w-]+)\)", colour)
    if plain:
        return variables[plain.group(1)]
    mix = re.fullmatch(r"color-mix\(in srgb, var\(--([\w-]+)\) (\d+)%, var\(--([\w-]+)\)\)", colour)
    assert mix, f"the test cannot resolve the colour {colour!r}; write it as var() or color-mix(in srgb, …)"
    first, share, second = variables[mix.group(1)], int(mix.group(2)) / 100, variables[mix.group(3)]
    return tuple(round(a * share + b * (1 - share)) for a, b in zip(first, second, strict=True))


def test_every_verdict_has_one_row_and_ready_comes_last():
    assert list(VERDICTS) == [*[v for v in Verdict if v is not Verdict.READY], Verdict.READY]
    assert set(VERDICTS) == set(Verdict)


@pytest.mark.parametrize("verdict", list(Verdict), ids=str)
def test_every_verdict_has_a_label_tone_colour_guidance_and_event_class(verdict):
    row: VerdictRow = VERDICTS[verdict]
    assert verdict.label.strip(), f"{verdict} has no label"
    assert row.tone in TONES, f"{verdict} has no tone"
    assert row.colour.strip(), f"{verdict} has no colour"
    assert row.guidance.strip(), f"{verdict} has no guidance"
    if verdict is Verdict.READY:
        assert row.event_class is None
    else:
        assert row.event_class in EventClass, f"{verdict} has no event class"


@pytest.mark.parametrize("verdict", list(Verdict), ids=str)
def test_the_stylesheet_draws_every_verdict_with_its_colour(verdict):
    css = _css()
    selector = f".s-{slugify(verdict)}"
    fills = _fills(css)
    assert selector in fills, f"app.css has no `{selector} {{ fill: … }}` rule for {verdict}"
    assert fills[selector] == VERDICTS[verdict].colour, f"{selector} in app.css is not the colour of its row"
    assert f".badge.{VERDICTS[verdict].tone} " in css, f"app.css has no .badge.{VERDICTS[verdict].tone} rule"


def test_no_two_verdicts_share_a_colour_in_light_or_dark_mode():
    colours = {verdict: row.colour for verdict, row in VERDICTS.items()}
    for scheme, variables in _schemes(_css()).items():
        computed: dict[tuple[int, ...], list[str]] = {}
        for verdict, colour in colours.items():
            computed.setdefault(_resolve(colour, variables), []).append(verdict)
        shared = {f"rgb{rgb}": names for rgb, names in computed.items() if len(names) > 1}
        assert not shared, f"verdicts sharing a colour in {scheme} mode: {shared}"


def test_every_event_class_has_a_label_and_each_finding_verdict_its_own_class():
    assert all(event_class.label.strip() for event_class in EventClass)
    classes = [row.event_class for row in VERDICTS.values() if row.event_class is not None]
    assert len(classes) == len(set(classes))
