"""A secret is not in the index, so searching for it finds nothing; no snippet, HTML or context ever shows it."""

import json

import pytest

from search_app.context import read_context
from search_app.errors import SearchError
from search_app.service import run_search
from tests.search_app.factories import add_messages, make_conversation, make_run, tool_result

pytestmark = pytest.mark.django_db

SECRET = "sk-proj-Zq81xYv0aBcDeFgHiJkLmNoP"


@pytest.fixture
def leaked(tenant):
    run = make_run(make_conversation(tenant, "c"), "r")
    add_messages(
        run,
        [
            "unrelated opening",
            tool_result("env", f"OPENAI_API_KEY={SECRET}\npassword: hunter2\nACME-778899 is the vault id"),
        ],
    )


def test_a_search_for_the_secret_finds_nothing_and_its_message_never_shows_it(tenant, leaked):
    assert run_search(tenant=tenant, query=SECRET, conversation_id="c").results == []
    assert run_search(tenant=tenant, query="hunter2", conversation_id="c").results == []
    response = run_search(tenant=tenant, query="OPENAI_API_KEY", conversation_id="c")
    assert [hit.position for hit in response.results] == [1]
    dumped = json.dumps(response.as_dict())
    assert SECRET not in dumped and "Zq81xYv0aBcDeFgHiJkLmNoP" not in dumped
    assert "hunter2" not in dumped


def test_tenant_patterns_are_masked_in_snippets_and_context(tenant, leaked):
    tenant.redaction_patterns = [r"ACME-\d{6}"]
    tenant.save()
    response = run_search(tenant=tenant, query="vault", conversation_id="c")
    assert "ACME-778899" not in response.results[0].snippet
    window = read_context(tenant=tenant, conversation_id="c", position=1, before=1, after=0)
    assert "ACME-778899" not in window.messages[1].text
    assert SECRET not in window.messages[1].text


def test_an_unusable_tenant_pattern_fails_closed(tenant, leaked):
    tenant.redaction_patterns = ["(broken"]
    tenant.save()
    with pytest.raises(SearchError, match="unusable redaction pattern"):
        run_search(tenant=tenant, query="vault", conversation_id="c")
