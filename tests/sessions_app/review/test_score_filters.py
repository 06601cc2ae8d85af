"""The review clauses of a list or search query (`score:NAME>=4`, `label:NAME`, `sort:NAME`), pure."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from input_errors import RejectedInput
from sessions_app.review.score_filters import ScoreClause, parse_review_query


def test_clauses_are_taken_out_and_the_rest_is_left_for_search():
    query = parse_review_query('score:helpfulness>=4 label:escalate deploy "roll back" sort:helpfulness:asc')
    assert query.scores == (ScoreClause("helpfulness", ">=", "4"),)
    assert query.labels == ("escalate",)
    assert query.sort == "helpfulness" and query.sort_ascending
    assert query.text == 'deploy "roll back"'


def test_a_query_without_clauses_is_passed_on_exactly():
    assert parse_review_query('  QUOKKA-5521 "a b  c" ').text == 'QUOKKA-5521 "a b  c"'
    assert not parse_review_query("deploy").narrows


@pytest.mark.parametrize(
    "clause, operator, value",
    [("score:x", "", ""), ("score:x=yes", "=", "yes"), ("score:x!=no", "!=", "no"), ("score:x<2.5", "<", "2.5")],
)
def test_each_comparison_reads(clause, operator, value):
    assert parse_review_query(clause).scores == (ScoreClause("x", operator, value),)


@pytest.mark.parametrize(
    "query, reason",
    [
        ("score:x>>4", "one comparison"),
        ("score:x>=high", "not a number"),
        ("score:Bad>=1", "not a score name"),
        ("label:", "names nothing"),
        ("sort:x:sideways", ":asc or :desc"),
        (" ".join(f"label:l{i}" for i in range(9)), "At most 8"),
    ],
)
def test_unreadable_clauses_are_refused_with_the_reason(query, reason):
    with pytest.raises(RejectedInput, match=reason):
        parse_review_query(query)


@given(st.text(max_size=200))
def test_any_text_parses_or_is_refused_by_name(text):
    try:
        query = parse_review_query(text)
    except RejectedInput as error:
        assert error.status == 400 and error.message
    else:
        assert len(query.scores) + len(query.labels) <= 8
