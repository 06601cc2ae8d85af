"""Every detector does work linear in its input: each row is an RE2 program of at most MAX_PROGRAM_SIZE
instructions (RE2 matches in time proportional to program size × text length, never backtracking), the rows make
the same number of passes whatever the text, and the credential-container scanner reads each character at most
once. Hostile inputs grown tenfold cost at most about tenfold, counted in engine work, not in seconds (the
seconds are in bench/masking.py)."""

import dataclasses
from collections.abc import Iterator
from unittest import mock

import pytest
import re2  # type: ignore[import-untyped]
from hypothesis import given, settings
from hypothesis import strategies as st

import masking.detectors as detectors
from masking.detectors import DETECTORS, MASK, MAX_CONTAINER_SCAN, MAX_MATCHES, MAX_PROGRAM_SIZE, Detector

# The probe's inputs (issue 29) and their relatives: runs a `[…]*` prefix or a lazy `.*?` would read again from
# every position, matches by the thousand, containers that never close.
HOSTILE = (
    "key -",
    "key " + "Zm9vYmFy_-",
    "x:// a.",
    "a.",
    "token=a ",
    '{"secret":',
    '{"secret":[',
    "password:\n",
    '"password": "',
    "-----BEGIN PRIVATE KEY-----",
    "eyJhbGciOi.",
    "AKIA",
    "aws_secret ",
    "sig=",
    "https://hooks.slack.com/services/",
    "Bearer ",
)


class Work:
    """RE2 work counted as the engine bounds it: program size × bytes handed to each pass, plus matches, plus
    the characters the container scanner reads."""

    def __init__(self) -> None:
        self.units = 0
        self.matches = 0


class CountingRegexp:
    def __init__(self, inner: detectors.Regexp, work: Work) -> None:
        self.inner, self.work = inner, work
        self.groupindex = inner.groupindex
        self.programsize = inner.programsize

    def _pass(self, text: bytes) -> None:
        self.work.units += self.inner.programsize * max(len(text), 1)

    def search(self, text: bytes) -> object:
        self._pass(text)
        return self.inner.search(text)

    def finditer(self, text: bytes) -> Iterator[detectors.Match]:
        self._pass(text)
        for match in self.inner.finditer(text):
            self.work.units += 1
            self.work.matches += 1
            yield match

    def sub(self, replace: object, text: bytes) -> bytes:
        self._pass(text)

        def counted(match: detectors.Match) -> bytes:
            self.work.units += 1
            return replace(match) if callable(replace) else match.expand(replace)

        return self.inner.sub(counted, text)


def _counting(work: Work) -> tuple[Detector, ...]:
    rows = []
    for row in DETECTORS:
        hint = row.hint if isinstance(row.hint, bytes) else CountingRegexp(row.hint, work)
        extend = row.extend
        if extend is not None:
            inner = extend

            def extend(text: bytes, start: int, inner=inner) -> int:
                end = inner(text, start)
                work.units += end - start
                return end

        rows.append(dataclasses.replace(row, hint=hint, pattern=CountingRegexp(row.pattern, work), extend=extend))
    return tuple(rows)


def _work(text: str) -> int:
    return _counted(text)[1].units


def _counted(text: str) -> tuple[str, Work]:
    work = Work()
    with mock.patch.object(detectors, "DETECTORS", _counting(work)):
        masked = detectors.redact(text)
    return masked, work


@pytest.mark.parametrize("unit", ["token=a ", "password=x\n", '"secret": "v", ', "AKIA" + "A" * 16 + " "])
def test_a_part_of_nothing_but_matches_is_masked_one_by_one_only_up_to_the_budget(unit):
    text = (unit * (1_000_000 // len(unit)))[:1_000_000]  # a part at MAX_PART_CHARS
    masked, work = _counted(text)
    # Every row stops at the first match past the budget: matches handled one by one are bounded, whatever the text.
    assert work.matches <= MAX_MATCHES + len(DETECTORS)
    assert masked.endswith(MASK)
    assert len(masked) < len(text) // 2  # the rest past the budget went as one mask
    assert "a " not in masked[-1000:] and 'v"' not in masked and "x\n" not in masked[-1000:]


def test_below_the_budget_every_match_is_masked_on_its_own():
    masked = detectors.redact("token=a " * 100 + "the end")
    assert masked == "token=*** " * 100 + "the end"


def test_every_row_is_a_bounded_re2_program():
    re2_type = type(re2.compile(b""))
    for row in DETECTORS:
        for pattern in (row.pattern, row.hint):
            if isinstance(pattern, bytes):
                continue
            assert isinstance(pattern, re2_type), row.name
            assert pattern.programsize <= MAX_PROGRAM_SIZE, row.name


@settings(max_examples=40, deadline=None)
@given(
    unit=st.lists(st.sampled_from(HOSTILE) | st.text(max_size=4), min_size=1, max_size=3).map("".join),
    lead=st.sampled_from(["", "key ", "x:// ", '{"token": ', "password: "]),
    count=st.integers(min_value=50, max_value=400),
)
def test_hostile_input_grown_tenfold_costs_at_most_about_tenfold(unit, lead, count):
    small = _work(lead + unit * count)
    large = _work(lead + unit * count * 10)
    assert large <= 11 * small


@pytest.mark.parametrize("size", [5_000, 20_000])
def test_the_probes_dash_runs_cost_what_their_length_does(size):
    """`key ` + 5,000 and 20,000 dashes: 11 s and a 500 after 60 s on Python's `re`."""
    assert _work("key " + "-" * size * 10) <= 11 * _work("key " + "-" * size)


def test_an_unclosed_credential_container_is_read_at_most_once_up_to_the_cap():
    text = '{"secret": [' + '"a", ' * (MAX_CONTAINER_SCAN // 2)
    masked = detectors.redact(text)
    assert masked == '{"secret": [***'
    nested = '{"secret": ' * 20_000
    assert _work(nested * 10) <= 11 * _work(nested)
