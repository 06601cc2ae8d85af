"""Search as you type: ranked hits grouped by conversation, highlighted, escaped, each opening in context."""

import re

from tests.sessions_app.dashboard.conftest import SECRET


def test_hits_are_grouped_by_conversation_and_link_to_their_message(world, as_role):
    page = as_role("support").get("/search/?q=QUOKKA-5521").content.decode()
    groups = re.findall(r'<h2><a href="/c/([^"]+)/">', page)
    assert groups == [world.deploy.external_id]
    links = re.findall(rf'href="/c/{world.deploy.external_id}/\?at=(\d+)#m-(\d+)"', page)
    assert links and all(at == anchor for at, anchor in links)


def test_matches_are_highlighted_inside_escaped_text(world, as_role):
    page = as_role("support").get("/search/?q=rollback").content.decode()
    assert "<mark>rollback</mark>" in page
    assert "&lt;b&gt;" in page
    assert "<b>rollback" not in page


def test_searching_for_a_secret_finds_its_message_but_never_shows_it(world, as_role):
    page = as_role("support").get("/search/?q=DEPLOY_TOKEN").content.decode()
    assert "1 of 1 matching message in 1 conversation" in page
    assert SECRET not in page


def test_the_role_filter_narrows_hits(world, as_role):
    client = as_role("support")
    everything = client.get("/search/?q=checkout_v3_enabled").content.decode()
    results_only = client.get("/search/?q=checkout_v3_enabled&role=tool_result").content.decode()
    assert everything.count('class="hit"') > results_only.count('class="hit"') > 0
    assert "· user ·" in everything
    assert "· user ·" not in results_only


def test_an_htmx_request_gets_only_the_results_region(world, as_role):
    body = as_role("support").get("/search/?q=Zürich", HTTP_HX_REQUEST="true").content.decode()
    assert body.strip().startswith('<section id="results"')
    assert "<html" not in body


def test_an_oversized_query_is_refused_with_a_reason(world, as_role):
    response = as_role("support").get("/search/?q=" + "a" * 5000)
    assert response.status_code == 400


def test_another_tenants_messages_never_appear(world, as_role):
    page = as_role("outsider").get("/search/?q=Krak%C3%B3w").content.decode()
    assert "conv-quiet" not in page
    assert "Nothing found:" in page


def test_the_empty_page_explains_the_keys(world, as_role):
    page = as_role("support").get("/search/").content.decode()
    assert "<kbd>/</kbd>" in page
    assert "data-search-input" in page


def test_while_typing_the_last_word_is_searched_as_a_prefix(world, as_role):
    client = as_role("support")
    typed = client.get("/search/?q=QUOK", HTTP_HX_REQUEST="true").content.decode()
    assert "QUOKKA" in typed and 'class="hit"' in typed
    submitted = client.get("/search/?q=QUOK").content.decode()
    assert "Nothing found:" in submitted


def test_only_an_unfinished_plain_last_word_becomes_a_prefix():
    from sessions_app.dashboard.search_access import as_you_type

    assert as_you_type("deploy chec") == "deploy chec*"
    assert as_you_type("deploy ") is None
    assert as_you_type('"open phrase') is None
    assert as_you_type("x") is None
    assert as_you_type("dep") is None  # too short a prefix to be worth ranking every term it starts
    assert as_you_type("already*") is None


def test_while_a_conversation_waits_for_reindexing_the_page_says_indexing(world, as_role):
    from search_app.index import mark_pending

    mark_pending(world.deploy.tenant_id, [world.deploy.pk])
    page = as_role("support").get("/search/?q=flag").content.decode()
    assert "Indexing:" in page


def test_messages_waiting_for_the_fold_are_found_and_the_page_warns_of_nothing(world, as_role):
    # The tail is searched all the same: only a conversation left out (re-indexing) is worth a warning.
    from search_app.index import index_state

    assert index_state([world.deploy.tenant_id]).unfolded  # the fixture's messages are still in the tail
    page = as_role("support").get("/search/?q=flag").content.decode()
    assert "Indexing:" not in page
    assert "flag" in page.lower()


def test_a_word_with_hits_of_its_own_is_not_widened_to_a_prefix_while_typing(world, as_role):
    # "check" is a word here ("Check the flag again") and a prefix of "checkout_v3_enabled".
    page = as_role("support").get("/search/?q=check", HTTP_HX_REQUEST="true").content.decode()
    assert "<mark>Check</mark> the flag again" in page
    assert "<mark>checkout" not in page
