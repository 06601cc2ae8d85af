"""What a score definition accepts (numeric in a range, boolean, one of its categories), pure."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from input_errors import RejectedInput
from sessions_app.review.score_values import ScoreKind, ScoreShape, ScoreValue, check_shape, parse_value

HELPFUL = ScoreShape("helpfulness", ScoreKind.NUMERIC, 1, 5)
ESCALATE = ScoreShape("escalate", ScoreKind.BOOLEAN)
TOPIC = ScoreShape("topic", ScoreKind.CATEGORICAL, categories=("billing", "deploy"))


def test_numbers_within_the_range_are_taken_and_outside_refused():
    assert parse_value(HELPFUL, "4") == ScoreValue(4.0, "")
    assert parse_value(HELPFUL, 5) == ScoreValue(5.0, "")
    for bad in ("6", "0.5", "nan", "inf", "four", True):
        with pytest.raises(RejectedInput, match="helpfulness"):
            parse_value(HELPFUL, bad)


def test_booleans_and_categories():
    assert parse_value(ESCALATE, "yes").number == 1.0
    assert parse_value(ESCALATE, False).number == 0.0
    assert parse_value(TOPIC, "deploy") == ScoreValue(None, "deploy")
    with pytest.raises(RejectedInput, match="billing, deploy"):
        parse_value(TOPIC, "other")
    with pytest.raises(RejectedInput, match="yes or no"):
        parse_value(ESCALATE, "maybe")


@pytest.mark.parametrize(
    "shape",
    [
        ScoreShape("Helpful", ScoreKind.NUMERIC, 1, 5),
        ScoreShape("h", ScoreKind.NUMERIC, 5, 1),
        ScoreShape("h", ScoreKind.NUMERIC, None, 1),
        ScoreShape("h", ScoreKind.NUMERIC, -math.inf, 1),
        ScoreShape("h", ScoreKind.CATEGORICAL),
        ScoreShape("h", ScoreKind.CATEGORICAL, categories=("a", "a")),
        ScoreShape("h", ScoreKind.CATEGORICAL, categories=("A b",)),
    ],
)
def test_unusable_definitions_are_refused(shape):
    with pytest.raises(RejectedInput):
        check_shape(shape)


@given(st.one_of(st.text(max_size=30), st.floats(), st.integers(), st.booleans()))
def test_any_value_is_taken_within_the_rules_or_refused(raw):
    for shape in (HELPFUL, ESCALATE, TOPIC):
        try:
            value = parse_value(shape, raw)
        except RejectedInput:
            continue
        if shape is HELPFUL:
            assert value.number is not None and 1 <= value.number <= 5
        if shape is TOPIC:
            assert value.text in TOPIC.categories
