"""Scope: conversation by default, fail closed without an id, out-of-scope answers like missing."""

import pytest

from search_app.errors import NEEDS_CONVERSATION, NEEDS_RUN, SearchError
from search_app.service import run_search
from tests.factories import make_tenant
from tests.search_app.factories import add_messages, make_conversation, make_conversation_with, make_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(tenant, other_tenant):
    make_conversation_with(tenant, ["the falcon lands at noon"], external_id="mine", run_id="run-mine")
    make_conversation_with(tenant, ["falcon backup plan"], external_id="sibling", run_id="run-sibling")
    make_conversation_with(other_tenant, ["falcon secret of globex"], external_id="theirs", run_id="run-theirs")


def as_answer(response):
    return (response.results, response.message, response.indexing, response.truncated)


def test_without_a_conversation_id_nothing_is_searched_and_the_reason_is_given(tenant, world):
    response = run_search(tenant=tenant, query="falcon")
    assert response.results == []
    assert response.message == NEEDS_CONVERSATION


def test_conversation_scope_sees_only_that_conversation(tenant, world):
    response = run_search(tenant=tenant, query="falcon", conversation_id="mine")
    assert [hit.conversation_id for hit in response.results] == ["mine"]


def test_another_tenants_conversation_answers_exactly_like_a_missing_one(tenant, world):
    theirs = run_search(tenant=tenant, query="falcon", conversation_id="theirs")
    missing = run_search(tenant=tenant, query="falcon", conversation_id="does-not-exist")
    assert theirs.message == "No persisted history for conversation 'theirs'."
    assert as_answer(theirs)[0] == [] and missing.results == []
    assert theirs.message.replace("theirs", "X") == missing.message.replace("does-not-exist", "X")


def test_another_tenants_run_answers_exactly_like_a_missing_run(tenant, world):
    theirs = run_search(tenant=tenant, query="falcon", scope="tenant", run_id="run-theirs")
    missing = run_search(tenant=tenant, query="falcon", scope="tenant", run_id="run-nope")
    assert theirs.results == missing.results == []
    assert theirs.message == "No persisted history for run 'run-theirs'."
    assert missing.message == "No persisted history for run 'run-nope'."


def test_a_run_of_another_conversation_is_out_of_scope_for_a_conversation_search(tenant, world):
    response = run_search(tenant=tenant, query="falcon", conversation_id="mine", run_id="run-sibling")
    assert response.results == []
    assert response.message == "No persisted history for run 'run-sibling'."


def test_run_scope_needs_a_run_id(tenant, world):
    response = run_search(tenant=tenant, query="falcon", scope="run")
    assert (response.results, response.message) == ([], NEEDS_RUN)


def test_tenant_scope_covers_the_tenant_and_never_another(tenant, world):
    response = run_search(tenant=tenant, query="falcon", scope="tenant")
    assert sorted(hit.conversation_id for hit in response.results) == ["mine", "sibling"]


def test_an_operator_can_search_all_of_their_tenants_and_only_those(tenant, other_tenant, world):
    third = make_tenant("initech")
    make_conversation_with(third, ["falcon of initech"], external_id="initech-conv")
    response = run_search(tenant=tenant, query="falcon", scope="tenants", tenants=[tenant, other_tenant])
    assert sorted((hit.tenant, hit.conversation_id) for hit in response.results) == [
        ("acme", "mine"),
        ("acme", "sibling"),
        ("globex", "theirs"),
    ]


def test_searching_several_tenants_requires_the_callers_own_tenant_list(tenant, other_tenant, world):
    with pytest.raises(SearchError, match="list of tenants"):
        run_search(tenant=tenant, query="falcon", scope="tenants")
    with pytest.raises(SearchError, match="list of tenants"):
        run_search(tenant=tenant, query="falcon", scope="tenants", tenants=[other_tenant])


def test_the_search_reads_earlier_steps_of_a_running_run(tenant):
    conversation = make_conversation(tenant, "live")
    run = make_run(conversation, "run-live")
    add_messages(run, ["step one mentions the heron"])
    assert run_search(tenant=tenant, query="heron", conversation_id="live").results
    add_messages(run, ["step two mentions the ibis"])
    assert [h.position for h in run_search(tenant=tenant, query="ibis", conversation_id="live").results] == [1]


def test_an_unknown_scope_is_an_error(tenant):
    with pytest.raises(SearchError, match="Unknown scope 'store'"):
        run_search(tenant=tenant, query="falcon", scope="store")
