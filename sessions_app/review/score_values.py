"""What a score definition is and what value it accepts. Pure.

Three kinds, as Langfuse's score configs: numeric within an inclusive range, boolean, or one of a set of
categories. A value is stored as a number (numeric, boolean as 0/1) or as its category's text, so the list can
compare numbers in SQL and match categories exactly.
"""

import math
import re
from dataclasses import dataclass
from enum import StrEnum

from input_errors import RejectedInput

NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")
MAX_CATEGORIES = 50
MAX_CATEGORY_LENGTH = 64
TRUE_WORDS = {"true", "yes", "1", "on"}
FALSE_WORDS = {"false", "no", "0", "off"}


class ScoreKind(StrEnum):
    NUMERIC = "numeric"
    BOOLEAN = "boolean"
    CATEGORICAL = "categorical"


@dataclass(frozen=True)
class ScoreShape:
    """A definition's rules, as plain data."""

    name: str
    kind: ScoreKind
    minimum: float | None = None
    maximum: float | None = None
    categories: tuple[str, ...] = ()


@dataclass(frozen=True)
class ScoreValue:
    number: float | None
    text: str

    def shown(self, kind: ScoreKind) -> str:
        if kind is ScoreKind.BOOLEAN:
            return "yes" if self.number else "no"
        if kind is ScoreKind.NUMERIC and self.number is not None:
            return f"{self.number:g}"
        return self.text


def check_shape(shape: ScoreShape) -> ScoreShape:
    """The shape if it can be used, else RejectedInput naming what is wrong."""
    if not NAME_PATTERN.match(shape.name):
        raise RejectedInput("A score name is 1-64 lowercase letters, digits, '_' or '-', starting with a letter.")
    if shape.kind is ScoreKind.NUMERIC:
        if shape.minimum is None or shape.maximum is None:
            raise RejectedInput("A numeric score needs a minimum and a maximum.")
        if not (math.isfinite(shape.minimum) and math.isfinite(shape.maximum)) or shape.minimum >= shape.maximum:
            raise RejectedInput("A numeric score's minimum must be below its maximum.")
    if shape.kind is ScoreKind.CATEGORICAL:
        categories = shape.categories
        if not categories or len(categories) > MAX_CATEGORIES:
            raise RejectedInput(f"A categorical score needs 1 to {MAX_CATEGORIES} categories.")
        if len(set(categories)) != len(categories):
            raise RejectedInput("A categorical score's categories must differ.")
        if any(not NAME_PATTERN.match(c) or len(c) > MAX_CATEGORY_LENGTH for c in categories):
            raise RejectedInput("A category is 1-64 lowercase letters, digits, '_' or '-', starting with a letter.")
    return shape


def parse_value(shape: ScoreShape, raw: str | float | bool) -> ScoreValue:
    """The value `raw` means for `shape` (a form's text or the API's JSON), else RejectedInput naming the rule."""
    if shape.kind is ScoreKind.BOOLEAN:
        if isinstance(raw, bool):
            return ScoreValue(1.0 if raw else 0.0, "")
        word = str(raw).strip().lower()
        if word in TRUE_WORDS | FALSE_WORDS:
            return ScoreValue(1.0 if word in TRUE_WORDS else 0.0, "")
        raise RejectedInput(f"Score {shape.name!r} is yes or no.")
    if shape.kind is ScoreKind.CATEGORICAL:
        text = str(raw).strip()
        if text not in shape.categories:
            raise RejectedInput(f"Score {shape.name!r} is one of: {', '.join(shape.categories)}.")
        return ScoreValue(None, text)
    if isinstance(raw, bool):
        raise RejectedInput(f"Score {shape.name!r} is a number.")
    try:
        number = float(raw)
    except ValueError:
        raise RejectedInput(f"Score {shape.name!r} is a number.") from None
    low = shape.minimum if shape.minimum is not None else -math.inf
    high = shape.maximum if shape.maximum is not None else math.inf
    if not math.isfinite(number) or not low <= number <= high:
        raise RejectedInput(f"Score {shape.name!r} is a number from {low:g} to {high:g}.")
    return ScoreValue(number, "")
