"""Scores on conversations, runs and messages: set by members on the page, shown in the list and on the page,
and filtering and sorting the list (`score:helpfulness>=4`, `label:escalate`, `sort:helpfulness`)."""

import pytest

from sessions_app.models import AuditEvent, Run, Score
from sessions_app.review import scores
from sessions_app.review.score_values import ScoreKind, ScoreShape
from sessions_app.review.targets import Target


@pytest.fixture
def defined(world):
    scores.define_score(world.acme, ScoreShape("helpfulness", ScoreKind.NUMERIC, 1, 5), actor="ada")
    scores.define_score(world.acme, ScoreShape("escalate", ScoreKind.BOOLEAN), actor="ada")
    scores.define_score(
        world.acme, ScoreShape("topic", ScoreKind.CATEGORICAL, categories=("billing", "deploy")), actor="ada"
    )
    return world


def _listed(client, query):
    response = client.get("/conversations/", {"q": query})
    body = response.content.decode()
    return response.status_code, [name for name in ("conv-deploy", "conv-quiet") if f">{name}<" in body]


def test_a_member_scores_a_conversation_a_run_and_a_message(defined, as_role):
    client = as_role("support")
    run = Run.objects.filter(tenant=defined.acme, conversation=defined.deploy).first()
    assert client.post("/c/conv-deploy/score", {"name": "helpfulness", "value": "4"}).status_code == 302
    assert (
        client.post("/c/conv-deploy/score", {"name": "escalate", "value": "yes", "run_id": run.run_id}).status_code
        == 302
    )
    assert client.post("/c/conv-deploy/score", {"name": "topic", "value": "deploy", "position": "1"}).status_code == 302
    rows = {(s.definition.name, s.target, s.author) for s in Score.objects.filter(tenant=defined.acme)}
    assert rows == {
        ("helpfulness", "c", "user:sam"),
        ("escalate", f"r:{run.run_id}", "user:sam"),
        ("topic", "m:1", "user:sam"),
    }
    page = client.get("/c/conv-deploy/").content.decode()
    assert 'data-score="helpfulness">4<' in page and 'data-score="escalate">yes<' in page
    assert AuditEvent.objects.filter(tenant=defined.acme, event_class="score_set").count() == 3


def test_setting_it_again_replaces_the_author_s_value(defined, as_role):
    client = as_role("support")
    client.post("/c/conv-deploy/score", {"name": "helpfulness", "value": "2"})
    client.post("/c/conv-deploy/score", {"name": "helpfulness", "value": "5"})
    assert list(Score.objects.filter(tenant=defined.acme).values_list("number", flat=True)) == [5.0]


@pytest.mark.parametrize(
    "data, status",
    [
        ({"name": "helpfulness", "value": "9"}, 400),
        ({"name": "helpfulness", "value": "<script>"}, 400),
        ({"name": "nope", "value": "1"}, 404),
        ({"name": "helpfulness", "value": "3", "run_id": "no-such-run"}, 404),
        ({"name": "helpfulness", "value": "3", "position": "9999"}, 404),
        ({"name": "helpfulness", "value": "3", "position": "-1"}, 400),
        ({"name": "helpfulness", "value": "3", "position": "1", "run_id": "x"}, 400),
    ],
)
def test_refused_scores_name_the_problem_and_change_nothing(defined, as_role, data, status):
    before = (Score.objects.count(), AuditEvent.objects.count())
    response = as_role("support").post("/c/conv-deploy/score", data)
    assert response.status_code == status
    assert b"Nothing was changed" in response.content
    assert (Score.objects.count(), AuditEvent.objects.count()) == before


def test_the_list_shows_scores_and_filters_and_sorts_by_them(defined, as_role):
    scores.set_score(defined.acme, defined.deploy, Target(), "helpfulness", 5, author="user:ada")
    scores.set_score(defined.acme, defined.quiet, Target(), "helpfulness", 2, author="user:ada")
    scores.set_score(defined.acme, defined.quiet, Target(), "escalate", True, author="user:ada")
    scores.set_score(defined.acme, defined.deploy, Target(position=1), "topic", "deploy", author="api-key:sd_x")
    client = as_role("support")
    assert _listed(client, "score:helpfulness>=4") == (200, ["conv-deploy"])
    assert _listed(client, "score:helpfulness<4") == (200, ["conv-quiet"])
    assert _listed(client, "label:escalate") == (200, ["conv-quiet"])
    assert _listed(client, "label:deploy") == (200, ["conv-deploy"])
    assert _listed(client, "score:escalate=no") == (200, [])
    assert _listed(client, "score:topic") == (200, ["conv-deploy"])
    listed = client.get("/conversations/").content.decode()
    assert 'data-score="helpfulness">helpfulness 5<' in listed
    ascending = client.get("/conversations/", {"q": "sort:helpfulness:asc"}).content.decode()
    descending = client.get("/conversations/", {"q": "sort:helpfulness"}).content.decode()
    assert ascending.index(">conv-quiet<") < ascending.index(">conv-deploy<")
    assert descending.index(">conv-deploy<") < descending.index(">conv-quiet<")


def test_score_filters_combine_with_text_search(defined, as_role):
    scores.set_score(defined.acme, defined.deploy, Target(), "helpfulness", 5, author="user:ada")
    scores.set_score(defined.acme, defined.quiet, Target(), "helpfulness", 5, author="user:ada")
    client = as_role("support")
    assert _listed(client, "score:helpfulness>=4 Kraków") == (200, ["conv-quiet"])


@pytest.mark.parametrize(
    "query, status",
    [("score:nope>=1", 404), ("score:topic>=1", 400), ("score:helpfulness>>1", 400), ("sort:topic", 400)],
)
def test_unreadable_or_unknown_score_clauses_answer_with_the_reason(defined, as_role, query, status):
    response = as_role("support").get("/conversations/", {"q": query})
    assert response.status_code == status
    assert b"score" in response.content.lower()


def test_another_tenant_s_scores_are_not_its_filters(defined, as_role):
    scores.set_score(defined.acme, defined.deploy, Target(), "helpfulness", 5, author="user:ada")
    # globex has no score named helpfulness: the same clause is refused there, and shows nothing of acme.
    response = as_role("outsider").get("/conversations/", {"q": "score:helpfulness>=1"})
    assert response.status_code == 404
    assert b"conv-deploy" not in response.content


def test_only_admins_define_score_names(defined, as_role):
    assert as_role("operator").post("/settings/scores/", {"name": "x", "kind": "boolean"}).status_code == 403
    response = as_role("admin").post(
        "/settings/scores/", {"name": "x", "kind": "numeric", "minimum": "3", "maximum": "1"}
    )
    assert response.status_code == 400 and b"below its maximum" in response.content
    assert as_role("admin").post("/settings/scores/", {"name": "tone", "kind": "boolean"}).status_code == 302
    duplicate = as_role("admin").post("/settings/scores/", {"name": "tone", "kind": "boolean"})
    assert duplicate.status_code == 400 and b"already exists" in duplicate.content
    assert [d.name for d in scores.definitions(defined.acme)] == ["escalate", "helpfulness", "tone", "topic"]


def test_search_hits_are_narrowed_by_score_clauses_and_clauses_alone_open_the_list(defined, as_role):
    scores.set_score(defined.acme, defined.deploy, Target(), "helpfulness", 5, author="user:ada")
    client = as_role("support")
    kept = client.get("/search/", {"q": "flag score:helpfulness>=4"}).content.decode()
    assert "conv-deploy" in kept and 'id="review-notice"' in kept
    dropped = client.get("/search/", {"q": "flag score:helpfulness<4"}).content.decode()
    assert 'href="/c/conv-deploy/' not in dropped and "kept 0 of the 1 conversations" in dropped
    alone = client.get("/search/", {"q": "score:helpfulness>=4"})
    assert alone.status_code == 302 and alone["Location"].startswith("/conversations/?q=score")
    refused = client.get("/search/", {"q": "flag score:nope>=1"})
    assert refused.status_code == 404 and b"No score named" in refused.content
