"""`indexing: true` while anything of the searched scope is unfolded (in the tail) or pending, in every scope."""

import pytest

from search_app import folding, index
from search_app.service import run_search
from tests.search_app.factories import add_messages, make_conversation, make_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_conversations(tenant):
    first = make_conversation(tenant, "c")
    add_messages(make_run(first, "r"), ["a kittiwake on the cliff", "another line"])
    second = make_conversation(tenant, "d")
    add_messages(make_run(second, "r2"), ["the kittiwake again"])
    return first, second


def flags(tenant):
    return (
        run_search(tenant=tenant, query="kittiwake", conversation_id="c").indexing,
        run_search(tenant=tenant, query="kittiwake", conversation_id="d").indexing,
        run_search(tenant=tenant, query="kittiwake", scope="run", run_id="r").indexing,
        run_search(tenant=tenant, query="kittiwake", scope="tenant").indexing,
    )


def test_unfolded_documents_answer_indexing_until_folded_and_are_found_meanwhile(tenant, two_conversations):
    unfolded = run_search(tenant=tenant, query="kittiwake", scope="tenant")
    assert (unfolded.indexing, unfolded.total_matches) == (True, 2)  # the tail is searched all the same
    assert flags(tenant) == (True, True, True, True)
    folding.fold_tenant(tenant.id)
    assert flags(tenant) == (False, False, False, False)
    folded = run_search(tenant=tenant, query="kittiwake", scope="tenant")
    assert [hit.score for hit in folded.results] == [hit.score for hit in unfolded.results]


def test_a_new_message_flags_only_the_scopes_that_hold_it(tenant, two_conversations):
    first, _ = two_conversations
    folding.fold_tenant(tenant.id)
    add_messages(make_run(first, "r3"), ["kittiwake chicks"])
    # Conversation c and the tenant hold the new message; conversation d and run r do not.
    assert flags(tenant) == (True, False, False, True)


def test_a_pending_conversation_still_answers_indexing_when_nothing_is_unfolded(tenant, two_conversations):
    first, _ = two_conversations
    folding.fold_tenant(tenant.id)
    index.mark_pending(first.tenant_id, [first.id])
    assert flags(tenant) == (True, False, True, True)


def test_another_tenants_unfolded_documents_do_not_flag_this_tenant(tenant, other_tenant, two_conversations):
    folding.fold_tenant(tenant.id)
    other = make_conversation(other_tenant, "x")
    add_messages(make_run(other, "rx"), ["kittiwake of globex"])
    assert flags(tenant) == (False, False, False, False)
