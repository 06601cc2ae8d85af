"""The triage list in Chromium: a row shows its first prompt, tokens, cost and duration; verdict chips come worst
first, each with a swatch in its verdict's own colour (B3: WAITING and MISSING OUTCOME RECEIPT differ)."""

import pytest
from django.utils.text import slugify

from sessions_app.audit.vocabulary import ALL_VERDICTS
from sessions_app.models import Conversation, TranscriptEntry
from sessions_app.transcripts import list_columns

pytestmark = pytest.mark.browser


def _price_every_model(tenant) -> None:
    models = {
        facts["model_name"]
        for facts in TranscriptEntry.objects.filter(tenant=tenant).values_list("facts", flat=True)
        if facts.get("model_name")
    }
    tenant.price_overrides = {name: {"input": "3", "output": "15"} for name in models}
    tenant.save()
    for conversation in Conversation.objects.filter(tenant=tenant):
        list_columns.recompute_conversation(conversation, list_columns.tenant_prices(tenant))


def test_a_row_shows_preview_tokens_cost_and_duration(live_world, login, page, live_server):
    _price_every_model(live_world.acme)
    deploy = Conversation.objects.get(pk=live_world.deploy.pk)
    login("sam")
    row = page.locator("tr[data-nav-item]", has=page.get_by_role("link", name="conv-deploy", exact=True))
    assert deploy.first_user_text
    assert row.locator("[data-preview]").inner_text().startswith(deploy.first_user_text[:40])
    assert row.locator('[data-col="tokens"]').inner_text() == f"{deploy.total_tokens:,}"
    assert deploy.total_tokens > 0
    assert row.locator('[data-col="cost"]').inner_text().startswith("$")
    assert row.locator('[data-col="duration"]').inner_text().split()[-1] in {"ms", "s", "min", "h", "d"}
    chips = row.locator("[data-verdict]")
    assert chips.first.get_attribute("data-verdict") == deploy.worst_verdict
    assert page.console_errors == []


def test_every_verdict_chip_has_a_colour_no_other_verdict_has(live_world, login, page):
    login("sam")
    slugs = [slugify(v) for v in ALL_VERDICTS]
    colours = page.evaluate(
        """slugs => slugs.map(slug => {
            const chip = document.createElement('span');
            chip.className = 'badge verdict v-' + slug;
            chip.textContent = slug;
            document.body.appendChild(chip);
            return getComputedStyle(chip, '::before').backgroundColor;
        })""",
        slugs,
    )
    by_colour: dict[str, list[str]] = {}
    for slug, colour in zip(slugs, colours, strict=True):
        by_colour.setdefault(colour, []).append(slug)
    assert all(len(same) == 1 for same in by_colour.values()), by_colour
    assert colours[slugs.index("waiting")] != colours[slugs.index("missing-outcome-receipt")]
