"""POST /api/v1/scores: a server key sets a score (the key recorded as its author); a client key may not; refused
input names the problem and writes nothing."""

import pytest

from sessions_app.ingest.payloads import parse_snapshot
from sessions_app.ingest.service import ingest_snapshots
from sessions_app.models import AuditEvent, Score
from sessions_app.review import scores
from sessions_app.review.score_values import ScoreKind, ScoreShape
from sessions_app.tenancy.api_keys import create_api_key
from tests.factories import make_tenant
from tests.sessions_app.api.test_hostile_input import snapshot


@pytest.fixture
def acme(db):
    tenant = make_tenant("acme", "Acme")
    ingest_snapshots(
        tenant, [parse_snapshot(snapshot(conversation_id="c-1", run_id="r-1"))], source="server", via="api"
    )
    scores.define_score(tenant, ShapeOf.HELPFUL, actor="t")
    scores.define_score(tenant, ShapeOf.ESCALATE, actor="t")
    return tenant


class ShapeOf:
    HELPFUL = ScoreShape("helpfulness", ScoreKind.NUMERIC, 1, 5)
    ESCALATE = ScoreShape("escalate", ScoreKind.BOOLEAN)


def _post(client, key, body):
    return client.post(
        "/api/v1/scores", body, content_type="application/json", headers={"Authorization": f"Bearer {key}"}
    )


def test_a_server_key_sets_scores_and_is_recorded_as_their_author(acme, client):
    key, raw = create_api_key(acme, "server", "eval-job")
    response = _post(client, raw, {"conversation_id": "c-1", "name": "helpfulness", "value": 4.5})
    assert response.status_code == 201
    assert response.json()["author"] == f"api-key:{key.prefix}" and response.json()["number"] == 4.5
    assert (
        _post(client, raw, {"conversation_id": "c-1", "name": "escalate", "value": True, "run_id": "r-1"}).status_code
        == 201
    )
    assert (
        _post(client, raw, {"conversation_id": "c-1", "name": "helpfulness", "value": 2, "position": 0}).status_code
        == 201
    )
    assert {(s.target, s.author) for s in Score.objects.all()} == {
        ("c", f"api-key:{key.prefix}"),
        ("r:r-1", f"api-key:{key.prefix}"),
        ("m:0", f"api-key:{key.prefix}"),
    }
    assert AuditEvent.objects.filter(event_class="score_set", actor=f"api-key:{key.prefix}").count() == 3


def test_a_client_key_may_not_score(acme, client):
    _, raw = create_api_key(acme, "client", "browser")
    assert _post(client, raw, {"conversation_id": "c-1", "name": "helpfulness", "value": 4}).status_code == 403
    assert not Score.objects.exists()


@pytest.mark.parametrize(
    "body, status, says",
    [
        ({"conversation_id": "c-1", "name": "helpfulness", "value": 7}, 400, "from 1 to 5"),
        ({"conversation_id": "c-1", "name": "helpfulness", "value": "4"}, 201, ""),
        ({"conversation_id": "c-1", "name": "escalate", "value": 3}, 400, "yes or no"),
        ({"conversation_id": "c-1", "name": "nope", "value": 1}, 404, "No score named"),
        ({"conversation_id": "c-2", "name": "helpfulness", "value": 1}, 404, "No conversation"),
        ({"conversation_id": "c-1", "name": "helpfulness", "value": 1, "run_id": "r-9"}, 404, "No run"),
        ({"conversation_id": "c-1", "name": "helpfulness", "value": 1, "position": 99}, 404, "position 99"),
        (
            {"conversation_id": "c-1", "name": "helpfulness", "value": 1, "position": 0, "run_id": "r-1"},
            400,
            "not both",
        ),
        ({"conversation_id": "c-1", "name": "helpfulness", "value": 1, "extra": 1}, 400, "extra"),
        ({"conversation_id": "c-1", "name": "helpfulness"}, 400, "value"),
        ({"conversation_id": "c-1", "name": "helpfulness", "value": "\u0000"}, 400, "NUL"),
    ],
)
def test_refused_input_names_the_problem_and_writes_nothing(acme, client, body, status, says):
    _, raw = create_api_key(acme, "server", "eval-job")
    before = (Score.objects.count(), AuditEvent.objects.count())
    response = _post(client, raw, body)
    assert response.status_code == status, response.content
    if status != 201:
        assert says in response.json()["error"]
        assert (Score.objects.count(), AuditEvent.objects.count()) == before
