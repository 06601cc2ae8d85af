"""A whole-tenant search's fixed work is one statement (search_app.facts): the same ids, index state, point in time
and statistics as the statements it replaces, and a word search over folded blocks makes three round trips."""

import pytest
from django.db import connection
from django.db.models import Max
from django.test.utils import CaptureQueriesContext

from search_app import folding
from search_app.backends import Scope
from search_app.facts import tenant_facts
from search_app.identify import identify
from search_app.index import index_state, mark_pending
from search_app.models import SearchDocument
from search_app.ranking import scope_statistics
from search_app.ranking.scoped_blocks import conversation_facts
from search_app.service import run_search
from sessions_app.models import Conversation, ToolEffect
from tests.agents import weather_messages
from tests.search_app.factories import add_messages, make_conversation, make_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def data(tenant, other_tenant):
    conversation = make_conversation(tenant, "deploy-2026-01-07")
    ops = make_run(conversation, "run-ops-41", agent_name="ops")
    add_messages(ops, weather_messages())  # its tool call id is "call-weather-1"
    ToolEffect.objects.create(
        tenant=tenant, run=ops, tool_call_id="call-weather-1", tool_name="get_weather", status="ok"
    )
    notes = make_conversation(tenant, "notes")
    add_messages(make_run(notes, "run-notes"), ["the quokka deploy went fine", "a second quokka note", "other"])
    theirs = make_run(make_conversation(other_tenant, "globex-conv"), "globex-run")
    add_messages(theirs, ["quokka in another tenant"])
    return notes


def separately(tenants, query):
    """What the statements the facts replace answer, one by one."""
    tenant_ids = tuple(t.id for t in tenants)
    state = index_state(tenant_ids)
    scope = Scope(tenant_ids, exclude_pending=state.pending)
    newest = SearchDocument.objects.filter(tenant_id__in=tenant_ids).aggregate(newest=Max("id"))["newest"] or 0
    return state, newest, scope_statistics(scope), identify(query, tenants)


@pytest.mark.parametrize("query", ["deploy-2026-01-07", "run-ops-41", "call-weather-1", "quokka", "  ", "x" * 500])
def test_the_facts_are_what_the_separate_statements_answer(tenant, other_tenant, data, query):
    for tenants in ([tenant], [tenant, other_tenant]):
        facts = tenant_facts(tenants, query)
        assert (facts.state, facts.newest, facts.stats, facts.identified) == separately(tenants, query)
    folding.fold_tenant(tenant.id)
    facts = tenant_facts([tenant], query)
    assert not facts.state.unfolded
    assert (facts.state, facts.newest, facts.stats, facts.identified) == separately([tenant], query)


def test_a_pending_conversation_is_out_of_the_statistics(tenant, data):
    mark_pending(tenant.id, [data.id])
    facts = tenant_facts([tenant], "quokka")
    assert facts.state.pending
    assert (facts.state, facts.newest, facts.stats, facts.identified) == separately([tenant], "quokka")
    assert facts.stats.documents == SearchDocument.objects.filter(tenant=tenant).exclude(conversation=data).count()


def test_a_later_page_identifies_nothing(tenant, data):
    assert tenant_facts([tenant], None).identified == []


def test_a_folded_word_search_makes_three_round_trips(tenant, data):
    folding.fold_tenant(tenant.id)
    run_search(tenant=tenant, scope="tenant", query="quokka")  # the tenant's masking rules, once per process
    with CaptureQueriesContext(connection) as statements:
        response = run_search(tenant=tenant, scope="tenant", query="quokka")
    assert response.total_matches == 2 and not response.indexing
    # The facts, the blocks (metadata, payloads, tombstones, tail), the hits.
    assert len(statements.captured_queries) == 3


@pytest.mark.parametrize("query", ["deploy-2026-01-07", "run-ops-41", "call-weather-1", "run-notes", "quokka"])
def test_a_conversation_search_finds_the_ids_in_its_facts_statement(tenant, data, query):
    deploy = Conversation.objects.get(tenant=tenant, external_id="deploy-2026-01-07")
    for conversation_id in ("deploy-2026-01-07", "notes"):
        conversation = deploy if conversation_id == "deploy-2026-01-07" else data
        by_id = conversation_facts((tenant.id,), None, conversation_id, query=query, tenants=[tenant])
        by_key = conversation_facts((tenant.id,), conversation.pk, query=query, tenants=[tenant])
        expected = identify(query, [tenant], conversation.pk)
        assert by_id is not None and by_key is not None
        assert by_id.conversation_pk == by_key.conversation_pk == conversation.pk
        assert by_id.identified == by_key.identified == expected
    assert conversation_facts((tenant.id,), None, "no-such-conversation", query=query, tenants=[tenant]) is None


def test_a_folded_conversation_search_makes_three_round_trips(tenant, data):
    folding.fold_tenant(tenant.id)
    run_search(tenant=tenant, conversation_id="notes", query="quokka")
    with CaptureQueriesContext(connection) as statements:
        response = run_search(tenant=tenant, conversation_id="notes", query="quokka")
    assert response.total_matches == 2 and not response.indexing
    # The facts with the ids, the blocks overlapping the conversation, the hits.
    assert len(statements.captured_queries) == 3
