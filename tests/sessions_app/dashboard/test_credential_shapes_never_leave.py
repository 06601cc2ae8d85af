"""Every credential shape the detectors know (tests/masking/shapes.py) is masked wherever text leaves the server:
search snippets, the context API, the support role's transcript page and the Markdown export. A tenant pattern RE2
cannot run is a form error, and one that would backtrack does not slow a page."""

import json
import time

import pytest

from search_app.context import read_context
from search_app.service import run_search
from sessions_app.transcripts.export import export_conversation
from tests.masking.shapes import MESSAGE_SHAPES, SHAPES
from tests.search_app.factories import add_messages, make_run, tool_result


@pytest.fixture
def leaky(world):
    run = make_run(world.quiet, "r-leaky")
    lines = "\n".join(f"{shape.name}: {shape.text}" for shape in SHAPES)
    add_messages(run, ["where are the credentials?", tool_result("env", f"credentials dump\n{lines}")])
    world.quiet.refresh_from_db()
    return world


def _assert_no_secret(text):
    for shape in SHAPES:
        assert shape.secret not in text, shape.name


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


def test_a_catastrophic_pattern_saved_by_an_admin_does_not_slow_a_page(world, as_role):
    assert as_role("admin").post("/settings/redaction/", {"patterns": "(a+)+$"}).status_code == 302
    run = make_run(world.quiet, "r-slow")
    add_messages(run, ["a" * 40 + "!"])
    started = time.monotonic()
    assert as_role("support").get(f"/conversations/{world.quiet.pk}/", follow=True).status_code == 200
    assert run_search(tenant=world.acme, query="a", conversation_id=world.quiet.external_id) is not None
    assert time.monotonic() - started < 5


@pytest.fixture
def structured(world):
    """Each credential a message's structure carries (tests/masking/shapes.py MESSAGE_SHAPES), one per message."""
    run = make_run(world.quiet, "r-structured")
    entries = add_messages(run, ["structured leak check", *(shape.message for shape in MESSAGE_SHAPES)])
    world.quiet.refresh_from_db()
    world.structured_at = entries[0].position
    return world


def test_credentials_in_a_messages_structure_never_leave(structured, as_role):
    conversation = structured.quiet
    page = as_role("support").get(f"/conversations/{conversation.pk}/?all=1", follow=True).content.decode()
    assert "structured leak check" in page
    window = read_context(
        tenant=structured.acme,
        conversation_id=conversation.external_id,
        position=structured.structured_at,
        before=0,
        after=len(MESSAGE_SHAPES),
    )
    assert len(window.messages) == 1 + len(MESSAGE_SHAPES)
    shown = json.dumps(window.as_dict())
    for shape in MESSAGE_SHAPES:
        assert shape.secret not in page, shape.name
        assert shape.secret not in shown, shape.name
        # Masked before it was indexed: the value as a phrase finds nothing.
        found = run_search(tenant=structured.acme, query=f'"{shape.secret}"', conversation_id=conversation.external_id)
        assert not found.results, shape.name
