"""Masked means unsearchable: with a client API key over HTTP, no word, prefix or phrase query finds a masked value.

The messages come from a real pydantic-ai agent (FunctionModel) whose tool prints an environment full of
credentials; the attacks are the ones that used to work: a prefix walked one character at a time, the value as a
word, as part of a phrase, and a number a tenant pattern masks after the messages were indexed.
"""

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from search_app import fold_worker
from search_app.models import ConversationIndex, SearchDocument
from sessions_app.models import AuditEvent
from sessions_app.tenancy import administration
from sessions_app.tenancy.api_keys import create_api_key
from tests.search_app.factories import add_messages, make_conversation, make_run

pytestmark = pytest.mark.django_db

PASSWORD = "hunter2secret"
TOKEN = "4f8a9c2e7b1d4f8a9c2e"
DB_PASSWORD = "s3cr3tDbPw"
ENVIRONMENT = (
    f"password={PASSWORD}\nAuthorization: Bearer {TOKEN}\nDATABASE_URL=postgres://app:{DB_PASSWORD}@db/app\n"
    "ticket 6990 is the vault ticket"
)
SECRETS = (PASSWORD, TOKEN, DB_PASSWORD.lower())


def _model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    if any(isinstance(part, ToolReturnPart) for part in messages[-1].parts):
        return ModelResponse(parts=[TextPart("Connected; the vault ticket 6990 is done.")])
    return ModelResponse(parts=[ToolCallPart("read_env", {}, tool_call_id="call-env-1")])


def _agent_messages() -> list[ModelMessage]:
    agent = Agent(FunctionModel(_model))

    @agent.tool_plain
    def read_env() -> str:
        return ENVIRONMENT

    return agent.run_sync("connect to the vault database").all_messages()


@pytest.fixture
def leaked(tenant):
    run = make_run(make_conversation(tenant, "conv-env"), "run-env")
    return add_messages(run, _agent_messages())


@pytest.fixture
def api(client, tenant):
    _, raw_key = create_api_key(tenant, "server")

    def search(q: str) -> dict:
        response = client.get("/api/v1/search", {"q": q, "scope": "tenant"}, HTTP_AUTHORIZATION=f"Bearer {raw_key}")
        assert response.status_code == 200, response.content
        return response.json()

    return search


def _attacks(secret: str) -> list[str]:
    """Every prefix from two characters on, the value as a word, and phrases joining it to its neighbours."""
    return [
        *(f"{secret[:n]}*" for n in range(2, len(secret) + 1)),
        secret,
        f'"password {secret}"',
        f'"bearer {secret}"',
        f'"app {secret} db"',
        f"{secret} -password",
    ]


def _found(body: dict) -> int:
    return len(body["results"]) + body["total_matches"]


def test_no_word_prefix_or_phrase_finds_a_built_in_masked_value(api, leaked):
    for secret in SECRETS:
        for query in _attacks(secret):
            assert _found(api(query)) == 0, query
    # The messages themselves stay searchable by what is not masked; their snippets show the mask.
    body = api("password")
    assert body["total_matches"] >= 1
    dumped = json.dumps(body)
    assert all(secret not in dumped.lower() for secret in SECRETS)
    assert "***" in dumped


def test_a_prefix_walk_learns_nothing(api, leaked):
    # The attack that used to recover the password: `4f8a*` found, `4f8b*` did not.
    assert [_found(api(f"{TOKEN[:4]}{c}*")) for c in "0123456789abcdef"] == [0] * 16
    assert _found(api(f"{TOKEN[:4]}*")) == _found(api("zz99*")) == 0


def test_a_new_tenant_pattern_makes_indexed_values_unsearchable(
    api, leaked, tenant, django_capture_on_commit_callbacks
):
    assert _found(api("6990")) > 0  # no pattern yet: an ordinary number
    events = AuditEvent.objects.count()
    with django_capture_on_commit_callbacks() as callbacks:
        administration.set_redaction_patterns(tenant, [r"\b\d{4}\b"], actor=None)
    assert callbacks == []  # nothing runs in the saving process: the fold worker rebuilds
    assert AuditEvent.objects.count() == events + 1

    # Until the rebuild, the tenant's conversations are out of search, and responses say so.
    pending = api("6990")
    assert pending["indexing"] is True and pending["reindexing"] is True and _found(pending) == 0
    assert _found(api("69*")) == _found(api('"ticket 6990"')) == 0

    assert fold_worker.run_pass().conversations == 1
    assert not ConversationIndex.objects.filter(pending=True).exists()
    for query in ("6990", "69*", "699*", '"ticket 6990"', '"6990 is"', "ticket 6990"):
        body = api(query)
        assert body["indexing"] is False
        assert "6990" not in json.dumps(body), query
        if query.startswith("6"):
            assert _found(body) == 0, query
    # The messages are back, found by their other words, with the number masked in the snippet.
    body = api("vault ticket")
    assert body["total_matches"] >= 1 and "6990" not in json.dumps(body)


def test_an_unchanged_pattern_list_does_not_reindex(tenant, leaked, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        administration.set_redaction_patterns(tenant, [], actor=None)
    assert callbacks == [] and not ConversationIndex.objects.filter(pending=True).exists()


def test_an_unusable_pattern_is_refused_and_changes_nothing(tenant, leaked):
    events = AuditEvent.objects.count()
    with pytest.raises(administration.AdminError, match="invalid"):
        administration.set_redaction_patterns(tenant, ["(unclosed"], actor=None)
    tenant.refresh_from_db()
    assert tenant.redaction_patterns == [] and AuditEvent.objects.count() == events
    assert not ConversationIndex.objects.filter(pending=True).exists()


def test_a_tenant_whose_stored_pattern_is_unusable_gets_nothing_indexed(tenant):
    tenant.redaction_patterns = ["(broken"]
    tenant.save()
    run = make_run(make_conversation(tenant, "conv-broken"), "run-broken")
    add_messages(run, ["ticket 6990 is the vault ticket"])
    assert not SearchDocument.objects.filter(tenant=tenant).exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrent saves need PostgreSQL's locks")
def test_two_pattern_saves_at_once_both_land_and_the_worker_rebuilds_under_the_last(tenant, api):
    run = make_run(make_conversation(tenant, "conv-env"), "run-env")
    add_messages(run, _agent_messages())
    for round_ in range(4):
        lists = [[r"\b\d{4}\b"], [rf"\bvault{round_}\b"]]
        start = threading.Barrier(2)

        def save(patterns: list[str], start: threading.Barrier = start) -> None:
            start.wait()
            try:
                administration.set_redaction_patterns(tenant, patterns, actor=None)
            finally:
                connection.close()

        events = AuditEvent.objects.count()
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(save, lists))  # re-raises either save's error
        tenant.refresh_from_db()
        assert tenant.redaction_patterns in lists and AuditEvent.objects.count() == events + 2
        fold_worker.run_pass()
        assert not ConversationIndex.objects.filter(pending=True).exists()
        # Indexed under whichever list was saved last: its masked values unsearchable, the other's searchable.
        numbers = _found(api("6990"))
        assert (numbers == 0) == (tenant.redaction_patterns == lists[0]), round_
