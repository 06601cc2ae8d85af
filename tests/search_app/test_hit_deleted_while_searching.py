"""A message deleted between the ranking and the reading of the hits is left out of the page, not an error."""

import pytest

from search_app import service
from search_app.models import SearchDocument
from search_app.service import run_search
from tests.search_app.factories import add_messages, make_conversation, make_run

pytestmark = pytest.mark.django_db


def test_a_hit_deleted_after_the_ranking_is_left_out(tenant, monkeypatch):
    add_messages(make_run(make_conversation(tenant, "c1"), "r1"), [f"deploy step {n}" for n in range(4)])
    ranked_page = service.rank_page

    def page_then_delete(*args, **kwargs):
        ranked, total = ranked_page(*args, **kwargs)
        SearchDocument.objects.filter(id=ranked[0][0]).delete()  # another request deletes it meanwhile
        return ranked, total

    monkeypatch.setattr(service, "rank_page", page_then_delete)
    response = run_search(tenant=tenant, query="deploy", scope="tenant")
    kept = SearchDocument.objects.filter(tenant=tenant).values_list("entry_id", flat=True)
    assert len(response.results) == 3
    assert {hit.entry_id for hit in response.results} == set(kept)
