"""What one model step cost, from genai-prices (the price data pydantic maintains), or a tenant's negotiated price.
Pure.

genai-prices answers from the data bundled in its package: nothing here starts its `UpdatePrices` thread, so no
price is ever fetched at run time (tests/sessions_app/transcripts/test_prices.py holds that to account). Prices
are taken at the step's own time, so a list price change never reprices old steps (not even `manage.py reprice`,
which applies a tenant's changed negotiated prices to its stored steps). A model with neither a list price nor a
tenant price has no price: `None`, shown as "no price", never 0.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from genai_prices import Usage, calc_price

MILLION = Decimal(1_000_000)
# The usage keys pydantic-ai's RequestUsage and genai-prices' Usage share (the rest are details).
USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "input_audio_tokens",
    "output_audio_tokens",
    "cache_audio_read_tokens",
)


@dataclass(frozen=True)
class NegotiatedPrice:
    """A tenant's price for one model, in USD per million tokens."""

    input_per_mtok: Decimal
    output_per_mtok: Decimal
    cache_read_per_mtok: Decimal | None = None


class BadPrice(ValueError):
    pass


def _price(value: object, name: str) -> Decimal:
    try:
        price = Decimal(str(value))
    except InvalidOperation as error:
        raise BadPrice(f"{name} must be a number of US dollars per million tokens.") from error
    if not price.is_finite() or price < 0 or price > 1_000_000:
        raise BadPrice(f"{name} must be between 0 and 1000000 US dollars per million tokens.")
    return price


def parse_overrides(data: Mapping[str, Any]) -> dict[str, NegotiatedPrice]:
    """A tenant's `price_overrides` ({model: {"input": x, "output": y, "cache_read": z}}) as prices; BadPrice
    names the first wrong entry."""
    prices: dict[str, NegotiatedPrice] = {}
    for model, entry in data.items():
        if not isinstance(entry, Mapping) or "input" not in entry or "output" not in entry:
            raise BadPrice(f"The price of {model!r} needs an 'input' and an 'output' price.")
        cache = entry.get("cache_read")
        prices[str(model)] = NegotiatedPrice(
            _price(entry["input"], f"{model}: input"),
            _price(entry["output"], f"{model}: output"),
            None if cache is None else _price(cache, f"{model}: cache_read"),
        )
    return prices


def _tokens(usage: Mapping[str, Any], key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _negotiated(usage: Mapping[str, Any], price: NegotiatedPrice) -> Decimal:
    cache_read = _tokens(usage, "cache_read_tokens")
    uncached = max(_tokens(usage, "input_tokens") - (cache_read if price.cache_read_per_mtok is not None else 0), 0)
    total = uncached * price.input_per_mtok + _tokens(usage, "output_tokens") * price.output_per_mtok
    if price.cache_read_per_mtok is not None:
        total += cache_read * price.cache_read_per_mtok
    return total / MILLION


def step_cost_usd(facts: Mapping[str, Any], overrides: Mapping[str, NegotiatedPrice]) -> Decimal | None:
    """The cost of a model response given as its facts (sessions_app.transcripts.message_facts); None when its
    model has no price. A response without usage cost nothing it told of: 0."""
    usage = facts.get("usage")
    usage = usage if isinstance(usage, Mapping) else {}
    model = facts.get("model_name")
    if not isinstance(model, str) or not model:
        return None
    if model in overrides:
        return _negotiated(usage, overrides[model])
    reported = {key: _tokens(usage, key) for key in USAGE_KEYS if _tokens(usage, key)}
    provider = facts.get("provider_name")
    when = _timestamp(facts.get("timestamp"))
    for provider_id in ([provider] if isinstance(provider, str) and provider else []) + [None]:
        try:
            calculation = calc_price(
                Usage(**reported), model, provider_id=provider_id, genai_request_timestamp=when
            )
        except LookupError:
            continue
        return calculation.total_price
    return None


def _timestamp(value: object) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            return None
    return None


def micro_usd(cost: Decimal) -> int:
    """A cost in whole millionths of a dollar, rounded half up (what the list stores and sorts on)."""
    return int((cost * MILLION).to_integral_value(rounding="ROUND_HALF_UP"))


def format_cost(micro: int, unpriced: int, steps: int) -> str:
    """How a cost reads: "$0.0123", "no price" when no step is priced, "$0.0123 + N unpriced" when some are not."""
    if steps and unpriced >= steps:
        return "no price"
    dollars = Decimal(micro) / MILLION
    text = f"${dollars:.4f}" if dollars < 1 else f"${dollars:,.2f}"
    return f"{text} + {unpriced} unpriced" if unpriced else text
