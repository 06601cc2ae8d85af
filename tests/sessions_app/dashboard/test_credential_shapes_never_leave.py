"""Every credential shape the detectors know is masked wherever text leaves the server: search snippets, the
context API, the support role's transcript page and the Markdown export. Tenant patterns run on RE2."""

import json
import time

import pytest

from search_app.redaction import compile_rules, redact
from search_app.service import read_context, run_search
from sessions_app.transcripts.export import export_conversation
from tests.search_app.factories import add_messages, make_run, tool_result

SHAPES = {
    "stripe": ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc"),
    "stripe restricted": ("rk_live_51HxyzABCDEF0123456789ab", "51HxyzABCDEF0123456789ab"),
    "aws": ("AKIAIOSFODNN7EXAMPLE", "IOSFODNN7EXAMPLE"),
    "github": ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "abcdefghijklmnopqrstuvwxyz0123456789"),
    "gitlab": ("glpat-xxYYzz0123456789abcd", "xxYYzz0123456789abcd"),
    "slack": ("xoxb-123456789012-abcdefghijkl", "123456789012-abcdefghijkl"),
    "jwt": ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", "dozjgNryP4J3jVmNHl0w5N"),
    "url userinfo": ("postgres://app:s3cretPassw0rd@db.internal:5432/prod", "s3cretPassw0rd"),
    "pem": ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAzzz\n-----END RSA PRIVATE KEY-----", "MIIEowIBAAK"),
    "password assignment": ("password=correct-horse-battery", "correct-horse-battery"),
    "secret assignment": ("secret=tr0ub4dor-and-3", "tr0ub4dor-and-3"),
    "token assignment": ("token=abcDEF123456ghi", "abcDEF123456ghi"),
}


@pytest.mark.parametrize("name", SHAPES)
def test_each_shape_is_masked_by_the_detectors(name):
    text, secret = SHAPES[name]
    assert secret not in redact(f"the value is {text} ok")


def test_a_url_keeps_its_user_and_host():
    assert redact("postgres://app:pw1234@db:5432/x") == "postgres://app:***@db:5432/x"


@pytest.fixture
def leaky(world):
    run = make_run(world.quiet, "r-leaky")
    lines = "\n".join(f"{name}: {text}" for name, (text, _) in SHAPES.items())
    add_messages(run, ["where are the credentials?", tool_result("env", f"credentials dump\n{lines}")])
    world.quiet.refresh_from_db()
    return world


def _assert_no_secret(text):
    for name, (_, secret) in SHAPES.items():
        assert secret not in text, name


def test_no_shape_leaves_through_snippets_context_transcript_or_markdown(leaky, as_role):
    conversation = leaky.quiet
    response = run_search(tenant=leaky.acme, query="credentials dump", conversation_id=conversation.external_id)
    assert response.results
    _assert_no_secret(json.dumps(response.as_dict()))
    hit = response.results[0]
    window = read_context(tenant=leaky.acme, conversation_id=conversation.external_id, position=hit.position)
    _assert_no_secret(json.dumps(window.as_dict()))
    page = as_role("support").get(f"/conversations/{conversation.pk}/?all=1", follow=True).content.decode()
    assert "credentials dump" in page
    _assert_no_secret(page)
    markdown = "".join(export_conversation(conversation, "markdown"))
    assert "credentials dump" in markdown
    _assert_no_secret(markdown)


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        (r"a{99999999999}", "repetition counts above 1000"),
        (r"(\w+)\1", "RE2"),
        (r"(?<=x)y", "RE2"),
        (r"(unclosed", "is invalid"),
    ],
)
def test_a_pattern_re2_cannot_run_is_a_form_error_and_nothing_is_saved(world, as_role, pattern, message):
    response = as_role("admin").post("/settings/redaction/", {"patterns": pattern})
    assert response.status_code in (200, 400)
    assert message in response.content.decode()
    world.acme.refresh_from_db()
    assert pattern not in (world.acme.redaction_patterns or [])


def test_a_catastrophic_pattern_runs_in_linear_time():
    rules = compile_rules([r"(a+)+$"])
    started = time.monotonic()
    masked = redact("a" * 5000 + "!", rules)
    assert time.monotonic() - started < 0.5
    assert masked.endswith("!")


def test_a_catastrophic_pattern_saved_by_an_admin_does_not_slow_a_page(world, as_role):
    assert as_role("admin").post("/settings/redaction/", {"patterns": "(a+)+$"}).status_code == 302
    run = make_run(world.quiet, "r-slow")
    add_messages(run, ["a" * 40 + "!"])
    started = time.monotonic()
    assert as_role("support").get(f"/conversations/{world.quiet.pk}/", follow=True).status_code == 200
    assert run_search(tenant=world.acme, query="a", conversation_id=world.quiet.external_id) is not None
    assert time.monotonic() - started < 5
