"""A model step's cost from genai-prices' bundled data or the tenant's negotiated price; no price is not 0; and
nothing is ever fetched at run time."""

from decimal import Decimal

import httpx2
import pytest
from genai_prices import data_snapshot

from sessions_app.transcripts.prices import BadPrice, format_cost, parse_overrides, step_cost_usd

GPT_4O = {
    "kind": "response",
    "model_name": "gpt-4o",
    "provider_name": "openai",
    "timestamp": "2026-01-05T09:00:00Z",
    "usage": {"input_tokens": 1000, "output_tokens": 500},
}


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("genai-prices tried to fetch prices")

    monkeypatch.setattr(httpx2, "get", refuse)


def test_a_known_model_is_priced_from_the_bundled_data():
    assert step_cost_usd(GPT_4O, {}) == Decimal("0.0075")  # 1000 × $2.50 + 500 × $10 per million
    assert data_snapshot._custom_snapshot is None  # no auto-update replaced the bundled prices


def test_an_unknown_model_has_no_price():
    assert step_cost_usd({**GPT_4O, "model_name": "function:my_model:", "provider_name": None}, {}) is None
    assert step_cost_usd({**GPT_4O, "model_name": None}, {}) is None
    assert format_cost(0, 3, 3) == "no price"
    assert format_cost(7_500, 1, 3) == "$0.0075 + 1 unpriced"


def test_a_negotiated_price_replaces_the_list_price():
    prices = parse_overrides({"gpt-4o": {"input": "1", "output": "4", "cache_read": "0.1"}})
    usage = {**GPT_4O, "usage": {"input_tokens": 1000, "output_tokens": 500, "cache_read_tokens": 400}}
    assert step_cost_usd(usage, prices) == (Decimal(600) * 1 + Decimal(500) * 4 + Decimal(400) * Decimal("0.1")) / 10**6


@pytest.mark.parametrize(
    "bad",
    [{"m": {"input": "x", "output": "1"}}, {"m": {"input": "1"}}, {"m": {"input": "-1", "output": "1"}}, {"m": 3}],
)
def test_a_bad_negotiated_price_is_refused_naming_the_model(bad):
    with pytest.raises(BadPrice, match="m"):
        parse_overrides(bad)
