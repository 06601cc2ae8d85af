"""What transcript rows add up to: turns, model steps, tool calls, tokens and cost. Pure.

A row counts by its facts (sessions_app.transcripts.message_facts), so a row being removed is taken off with the
facts stored on it, and a list column moves by exactly the rows an ingest wrote (the cost follows the new work).
Summary artifacts are not part of the transcript and count nothing.
"""

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Self

from sessions_app.transcripts.prices import NegotiatedPrice, micro_usd, step_cost_usd


@dataclass(frozen=True)
class Totals:
    """The `UsageTotals` columns of a run or conversation (sessions_app.models.store), as plain numbers."""

    turn_count: int = 0
    model_step_count: int = 0
    tool_call_count: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    cost_micro_usd: int = 0
    unpriced_steps: int = 0

    def __add__(self, other: "Totals") -> "Totals":
        return Totals(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})

    def __sub__(self, other: "Totals") -> "Totals":
        return Totals(**{f.name: getattr(self, f.name) - getattr(other, f.name) for f in fields(self)})

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def column_names(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    @classmethod
    def of(cls, row: object) -> Self:
        """The totals a model row (a Run or Conversation) holds."""
        return cls(**{f.name: getattr(row, f.name) for f in fields(cls)})


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def row_totals(facts: Mapping[str, Any], overrides: Mapping[str, NegotiatedPrice]) -> Totals:
    """What one transcript row (not a summary artifact) counts, from its facts."""
    parts = [p for p in facts.get("parts") or () if isinstance(p, Mapping)]
    kinds = [p.get("part_kind") for p in parts]
    if facts.get("kind") != "response":
        return Totals(turn_count=1 if "user-prompt" in kinds else 0)
    usage = facts.get("usage")
    usage = usage if isinstance(usage, Mapping) else {}
    tokens_in, tokens_out = _count(usage.get("input_tokens")), _count(usage.get("output_tokens"))
    cost = step_cost_usd(facts, overrides)
    return Totals(
        model_step_count=1,
        tool_call_count=kinds.count("tool-call"),
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        total_tokens=tokens_in + tokens_out,
        cost_micro_usd=0 if cost is None else micro_usd(cost),
        unpriced_steps=1 if cost is None else 0,
    )
