"""The detector table: every row and every key prefix has a credential shape, each shape is masked by the row
that claims it, credentials carried by a message's structure are masked, and tenant patterns run on RE2 in
linear time."""

import re
import time

import pytest

from masking import DETECTORS, PREFIXES, compile_rules, redact
from masking.detectors import redact_adjacent
from model_messages.rendering import message_text
from tests.masking.shapes import MESSAGE_SHAPES, SHAPES


@pytest.mark.parametrize("shape", SHAPES, ids=[shape.name for shape in SHAPES])
def test_each_shape_is_masked_by_the_detectors(shape):
    assert shape.secret not in redact(f"the value is {shape.text} ok")


@pytest.mark.parametrize("shape", SHAPES, ids=[shape.name for shape in SHAPES])
def test_each_shape_is_masked_by_the_row_that_claims_it(shape):
    (detector,) = [detector for detector in DETECTORS if detector.name == shape.detector]
    assert shape.secret not in detector.apply(shape.text.encode()).decode()


@pytest.mark.parametrize("shape", MESSAGE_SHAPES, ids=[shape.name for shape in MESSAGE_SHAPES])
def test_credentials_in_a_messages_structure_are_masked_in_its_text(shape):
    assert shape.secret in message_text(shape.message)
    assert shape.secret not in redact(message_text(shape.message))


def test_every_detector_has_a_shape():
    names = [detector.name for detector in DETECTORS]
    assert len(set(names)) == len(names), "detector names are unique"
    assert set(names) == {shape.detector for shape in SHAPES}


@pytest.mark.parametrize("prefix", PREFIXES)
def test_every_key_prefix_has_a_shape(prefix):
    assert any(re.match(prefix, shape.text) for shape in SHAPES if shape.detector == "prefixed key")


def test_a_url_keeps_its_user_and_host():
    assert redact("postgres://app:pw1234@db:5432/x") == "postgres://app:***@db:5432/x"


def test_a_json_value_under_a_credential_key_is_masked_to_its_close_and_the_rest_stays():
    text = '{"token": {"a": [1, "]}"], "b": {"c": 2}}, "after": "shown"}'
    assert redact(text) == '{"token": {***}, "after": "shown"}'


def test_a_value_following_a_label_in_the_previous_part_is_masked():
    assert redact_adjacent(["Your password:", "pa55 word\nthanks"], redact) == ["Your password:", "***\nthanks"]
    assert redact_adjacent(["the password", "reset flow"], redact) == ["the password", "reset flow"]


def test_non_ascii_text_around_a_credential_survives():
    assert redact("é token=ünï ok ☃") == "é token=*** ok ☃"


def test_a_catastrophic_pattern_runs_in_linear_time():
    rules = compile_rules([r"(a+)+$"])
    started = time.monotonic()
    masked = redact("a" * 5000 + "!", rules)
    assert time.monotonic() - started < 0.5
    assert masked.endswith("!")
