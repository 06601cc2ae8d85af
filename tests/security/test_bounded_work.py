"""Bounded work per request: each hostile input from issue 29, grown tenfold, costs at most about tenfold more work
(counted operations or a fixed cap, never timed; the timings are bench/security.py's) and is answered as expected."""

import json
import re
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import search_app.tokenize
from input_errors import RejectedInput
from masking import compile_rules
from masking.tenant_patterns import MAX_PATTERNS, MAX_PROGRAM_SIZE
from search_app.query import MAX_PREFIXES, QueryError, parse_query
from search_app.snippets import MAX_SCANNED_CHARS, make_snippet
from search_app.tokenize import Token
from sessions_app.core.api_input import MAX_JSON_DEPTH, brackets_outside_strings, decode_json, scan_depth

GROWTH = settings(max_examples=25, deadline=None)

# Invalid JSON shapes whose error path was quadratic or deep: escaped quotes (65,000 took 55 s), bare quotes,
# openers that never close, alternating brackets, backslashes.
HOSTILE_JSON = {
    "escaped quotes": lambda n: b'"' + b'\\"' * n,
    "quotes": lambda n: b'"' * n,
    "openers": lambda n: b"[" * n,
    "nesting": lambda n: b"[" * n + b"]" * n,
    "comb": lambda n: b'[[],"\\"' * n,
    "backslashes": lambda n: b'["' + b"\\" * n,
}


@GROWTH
@given(shape=st.sampled_from(sorted(HOSTILE_JSON)), n=st.integers(min_value=100, max_value=5_000))
def test_the_json_depth_scan_reads_each_byte_a_bounded_number_of_times(shape, n):
    small, large = HOSTILE_JSON[shape](n), HOSTILE_JSON[shape](10 * n)
    work_small, work_large = scan_depth(small).bytes_read, scan_depth(large).bytes_read
    # At most a few passes over the body, whatever its shape: linear, so tenfold input is about tenfold work.
    assert work_large <= 12 * len(large)
    assert work_large <= 11 * work_small + 12 * MAX_JSON_DEPTH


@pytest.mark.parametrize("shape", sorted(HOSTILE_JSON))
def test_hostile_json_answers_400(shape):
    with pytest.raises(RejectedInput) as refused:
        decode_json(HOSTILE_JSON[shape](65_000))
    assert refused.value.status == 400


def test_a_document_at_the_depth_bound_is_read_and_one_past_it_is_refused():
    assert decode_json(b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH) is not None
    with pytest.raises(RejectedInput, match="deeper than"):
        decode_json(b'[{"a":' * 33 + b"1" + b"}]" * 33)


def _snippet_work(monkeypatch: pytest.MonkeyPatch, text: str) -> int:
    """How many word runs the snippet's tokenizer was handed."""
    query, runs = parse_query("canary"), 0
    split_run = search_app.tokenize._split_run

    def counting(run: str, offset: int) -> Iterator[Token]:
        nonlocal runs
        runs += 1
        return split_run(run, offset)

    monkeypatch.setattr(search_app.tokenize, "_split_run", counting)
    make_snippet(text, query)
    return runs


@GROWTH
@given(n=st.integers(min_value=500, max_value=20_000), before=st.booleans())
def test_a_snippet_next_to_a_long_run_reads_the_run_as_one_word(n, before):
    with pytest.MonkeyPatch.context() as monkeypatch:

        def text(size: int) -> str:
            run = "0f" * (size // 2)
            return f"{run} canary" if before else f"canary {run}"

        small, large = _snippet_work(monkeypatch, text(n)), _snippet_work(monkeypatch, text(10 * n))
    # A hit next to a 60 kB hex run once read the run once per character (25.6 s) to widen the window to a word's
    # edge; the snippet now reads each word run once, so the run is one step however long it is.
    assert large == small == 2


def test_a_snippet_reads_no_further_than_its_cap():
    text = "x " * MAX_SCANNED_CHARS + "canary"
    assert "<mark>" not in make_snippet(text, parse_query("canary")).html
    assert "<mark>canary</mark>" in make_snippet("x " * 100 + "canary", parse_query("canary")).html


@given(count=st.integers(min_value=MAX_PREFIXES + 1, max_value=420))
@settings(max_examples=20, deadline=None)
def test_a_query_with_more_prefixes_than_the_bound_is_refused(count):
    letters = "abcdefghijklmnopqrstu"
    prefixes = [f"{a}{b}*" for a in letters for b in letters][:count]
    with pytest.raises(QueryError, match=f"the limit is {MAX_PREFIXES}"):
        parse_query(" ".join(prefixes))
    assert len(parse_query(" ".join(prefixes[:MAX_PREFIXES])).should) == MAX_PREFIXES


def test_more_tenant_patterns_than_the_bound_are_refused_with_a_reason():
    with pytest.raises(ValueError, match=f"the limit is {MAX_PATTERNS}"):
        compile_rules([f"zq{i}x" for i in range(MAX_PATTERNS + 1)])
    assert len(compile_rules([f"zq{i}x" for i in range(MAX_PATTERNS)])) == MAX_PATTERNS


def test_tenant_patterns_past_the_program_size_are_refused_with_a_reason():
    # 2,000 patterns `zqN[0-9]{1000}` took 12.3 s a search: 20 of them already pass the compiled-size bound.
    with pytest.raises(ValueError, match=f"past {MAX_PROGRAM_SIZE} compiled instructions"):
        compile_rules([f"zq{i}[0-9]{{1000}}" for i in range(MAX_PATTERNS)])


def test_a_tenant_pattern_set_is_compiled_once():
    sources = ["(a+)+$", "zq1[0-9]{10}"]
    assert compile_rules(sources) is compile_rules(list(sources))


# The definition `brackets_outside_strings` is checked against: a string literal, read escape by escape.
_STRING_LITERAL = re.compile(rb'"(?:[^"\\]++|\\.)*+"?', re.DOTALL)
_json_texts = st.recursive(
    st.none() | st.integers() | st.text(alphabet='ab"\\[]{}\n/u0'),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(alphabet='a"\\[]{'), children, max_size=4)
    ),
    max_leaves=25,
)


@given(_json_texts, st.booleans())
def test_the_brackets_outside_a_documents_strings_are_what_reading_its_literals_leaves(value, ascii_escaped):
    body = json.dumps(value, ensure_ascii=ascii_escaped).encode()
    assert brackets_outside_strings(body) == bytes(b for b in _STRING_LITERAL.sub(b"", body) if b in b"[]{}")


def _deepest_outside_literals(body: bytes) -> int:
    depth = deepest = 0
    for byte in _STRING_LITERAL.sub(b"", body):
        depth += 1 if byte in b"[{" else -1 if byte in b"]}" else 0
        deepest = max(deepest, depth)
    return deepest


_hostile_bytes = st.lists(
    st.sampled_from([b"[" * 8, b"[", b"]", b"{", b"}", b'"', b"\\", b'\\"', b"\\", b"a", b":", b","]), max_size=120
).map(b"".join)


@given(_hostile_bytes)
def test_a_scan_of_any_bytes_never_lets_through_what_nests_too_deep_outside_its_literals(body):
    """Invalid JSON may be counted deeper than it is (a backslash outside a string), never shallower."""
    if _deepest_outside_literals(body) > MAX_JSON_DEPTH:
        assert scan_depth(body).too_deep
