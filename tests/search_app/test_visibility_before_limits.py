"""What the caller may not see is removed before the limit, so it never changes what is returned."""

import pytest

from search_app.service import run_search
from tests.search_app.factories import add_messages, assistant, make_conversation, make_run

pytestmark = pytest.mark.django_db


def test_hidden_hits_with_higher_scores_never_displace_visible_ones(tenant, other_tenant):
    mine = make_run(make_conversation(tenant, "mine"), "run-mine")
    add_messages(mine, [f"pelican note {i} " + "padding " * i for i in range(12)])
    before = run_search(tenant=tenant, query="pelican", scope="tenant", limit=5)

    # Another tenant's messages are shorter (so they would score higher) and far more numerous.
    outsider = make_run(make_conversation(other_tenant, "theirs"), "run-theirs")
    add_messages(outsider, ["pelican"] * 40)
    after = run_search(tenant=tenant, query="pelican", scope="tenant", limit=5)

    assert len(after.results) == 5
    assert [(h.entry_id, h.score) for h in after.results] == [(h.entry_id, h.score) for h in before.results]


def test_filtered_out_roles_do_not_use_up_the_limit(tenant):
    run = make_run(make_conversation(tenant, "mixed"), "run-mixed")
    add_messages(run, ["osprey"] * 10 + [assistant("osprey sighted " + "x " * n) for n in range(3)])
    response = run_search(tenant=tenant, query="osprey", conversation_id="mixed", roles=["assistant"], limit=3)
    assert [hit.role for hit in response.results] == ["assistant"] * 3
    assert response.total_matches == 3
