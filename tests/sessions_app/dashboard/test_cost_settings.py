"""An admin sets the tenant's negotiated prices and STUCK threshold through a form: saved in one transaction with
an audit event per setting changed, read back into the form, used by ingest's pricing; a bad line is refused by
line and model, changing nothing; only admins reach it, and only their own tenant."""

from decimal import Decimal

import pytest
from django import forms

from sessions_app.dashboard.forms import parse_price_lines, price_lines
from sessions_app.models import Tenant
from sessions_app.models.audit import AuditEvent
from sessions_app.transcripts.list_columns import tenant_prices
from sessions_app.transcripts.prices import NegotiatedPrice
from tests.rowcounts import row_counts


def test_price_lines_read_a_model_and_two_or_three_prices():
    assert parse_price_lines("gpt-5-mini 0.25 2 0.025\n\n  in-house-llm 1 3  \n") == {
        "gpt-5-mini": {"input": "0.25", "output": "2", "cache_read": "0.025"},
        "in-house-llm": {"input": "1", "output": "3"},
    }
    assert parse_price_lines("") == {}


def test_price_lines_written_back_read_the_same():
    overrides = {"b": {"input": "1", "output": "2"}, "a": {"input": "0.5", "output": "4", "cache_read": "0.1"}}
    assert price_lines(overrides) == "a 0.5 4 0.1\nb 1 2"
    assert parse_price_lines(price_lines(overrides)) == overrides


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("ok 1 2\ngpt-5 1", "Line 2 (gpt-5): give the model name, then its input and output price"),
        ("gpt-5 1 2 3 4", "Line 1 (gpt-5): give the model name"),
        ("gpt-5 one 2", "Line 1: gpt-5: input must be a number of US dollars per million tokens."),
        ("gpt-5 1 -2", "Line 1: gpt-5: output must be between 0 and 1000000"),
        ("gpt-5 1 2 NaN", "Line 1: gpt-5: cache_read must be between 0 and 1000000"),
        ("gpt-5 1 2\ngpt-5 3 4", "Line 2: gpt-5 has a price on an earlier line already."),
    ],
)
def test_a_bad_price_line_is_named_with_what_is_wrong(text, named):
    with pytest.raises(forms.ValidationError) as refused:
        parse_price_lines(text)
    assert named in refused.value.messages[0]


@pytest.mark.django_db
def test_an_admin_saves_prices_and_the_stuck_threshold_with_an_audit_event_each(world, as_role):
    client = as_role("admin")
    response = client.post("/settings/costs/", {"stuck_after_hours": "6", "prices": "gpt-5-mini 0.3 2.5 0.03"})
    assert response.status_code == 302 and response["Location"] == "/settings/costs/"
    world.acme.refresh_from_db()
    assert world.acme.stuck_after_hours == 6
    assert tenant_prices(world.acme) == {"gpt-5-mini": NegotiatedPrice(Decimal("0.3"), Decimal("2.5"), Decimal("0.03"))}
    events = AuditEvent.objects.filter(tenant=world.acme, actor="ada")
    assert sorted(events.values_list("event_class", flat=True)) == ["prices_changed", "stuck_after_changed"]
    page = client.get("/settings/costs/").content.decode()
    assert "gpt-5-mini 0.3 2.5 0.03" in page and 'value="6"' in page
    # Saving the same again changes nothing, so it records nothing.
    client.post("/settings/costs/", {"stuck_after_hours": "6", "prices": "gpt-5-mini 0.3 2.5 0.03"})
    assert events.count() == 2
    assert Tenant.objects.get(pk=world.globex.pk).price_overrides == {}


@pytest.mark.django_db
def test_the_costs_page_says_old_runs_keep_their_cost_until_reprice_runs(world, as_role):
    page = as_role("admin").get("/settings/costs/").content.decode()
    assert "keep the cost they were given until" in page
    assert f"<code>python manage.py reprice --tenant {world.acme.slug}</code>" in page


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("data", "named"),
    [
        ({"stuck_after_hours": "0", "prices": ""}, "greater than or equal to 1"),
        ({"stuck_after_hours": "9000", "prices": ""}, "less than or equal to 8760"),
        ({"stuck_after_hours": "soon", "prices": ""}, "Enter a whole number."),
        ({"stuck_after_hours": "12", "prices": "gpt-5 1 2\nclaude x 2"}, "Line 2: claude: input must be a number"),
    ],
)
def test_a_bad_value_is_refused_by_name_and_changes_nothing(world, as_role, data, named):
    client = as_role("admin")
    before = row_counts()
    response = client.post("/settings/costs/", data)
    assert response.status_code == 400
    assert named in response.content.decode()
    assert row_counts() == before
    world.acme.refresh_from_db()
    assert world.acme.stuck_after_hours == 24 and world.acme.price_overrides == {}


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["support", "operator"])
def test_below_admin_the_costs_page_is_forbidden(world, as_role, role):
    client = as_role(role)
    assert client.get("/settings/costs/").status_code == 403
    assert client.post("/settings/costs/", {"stuck_after_hours": "1", "prices": ""}).status_code == 403
    world.acme.refresh_from_db()
    assert world.acme.stuck_after_hours == 24
