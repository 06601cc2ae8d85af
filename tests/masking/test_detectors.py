"""The detector table: every row and every key prefix has a credential shape, each shape is masked by the row
that claims it, and tenant patterns run on RE2 in linear time."""

import re
import time

import pytest

from masking import DETECTORS, PREFIXES, compile_rules, redact
from tests.masking.shapes import SHAPES


@pytest.mark.parametrize("shape", SHAPES, ids=[shape.name for shape in SHAPES])
def test_each_shape_is_masked_by_the_detectors(shape):
    assert shape.secret not in redact(f"the value is {shape.text} ok")


@pytest.mark.parametrize("shape", SHAPES, ids=[shape.name for shape in SHAPES])
def test_each_shape_is_masked_by_the_row_that_claims_it(shape):
    (detector,) = [detector for detector in DETECTORS if detector.name == shape.detector]
    assert shape.secret not in detector.pattern.sub(detector.replace, shape.text)


def test_every_detector_has_a_shape():
    names = [detector.name for detector in DETECTORS]
    assert len(set(names)) == len(names), "detector names are unique"
    assert set(names) == {shape.detector for shape in SHAPES}


@pytest.mark.parametrize("prefix", PREFIXES)
def test_every_key_prefix_has_a_shape(prefix):
    assert any(re.match(prefix, shape.text) for shape in SHAPES if shape.detector == "prefixed key")


def test_a_url_keeps_its_user_and_host():
    assert redact("postgres://app:pw1234@db:5432/x") == "postgres://app:***@db:5432/x"


def test_a_catastrophic_pattern_runs_in_linear_time():
    rules = compile_rules([r"(a+)+$"])
    started = time.monotonic()
    masked = redact("a" * 5000 + "!", rules)
    assert time.monotonic() - started < 0.5
    assert masked.endswith("!")
