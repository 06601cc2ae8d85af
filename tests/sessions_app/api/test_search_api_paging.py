"""GET /api/v1/search pages with `cursor`: counts over all pages, `next_cursor` until the last, 400 for a bad cursor."""

import pytest

from sessions_app.tenancy.api_keys import create_api_key
from tests.search_app.factories import add_messages, make_conversation, make_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(client, tenant):
    _, raw_key = create_api_key(tenant, "server")

    def get(**params):
        return client.get("/api/v1/search", params, HTTP_AUTHORIZATION=f"Bearer {raw_key}")

    return get


@pytest.fixture
def data(tenant):
    for number in range(3):
        run = make_run(make_conversation(tenant, f"conv-{number}"), f"run-{number}")
        add_messages(run, [f"the wren number {number} {i} " + "wren " * i for i in range(8)])


def test_pages_follow_the_cursor_to_the_last_one(api, data):
    seen, cursor, pages = [], None, 0
    while True:
        params = {"q": "wren", "scope": "tenant", "limit": 10, **({"cursor": cursor} if cursor else {})}
        body = api(**params).json()
        assert (body["total_matches"], body["total_conversations"]) == (24, 3)
        assert body["offset"] == len(seen)
        seen += [(hit["conversation_id"], hit["position"]) for hit in body["results"]]
        pages += 1
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert pages == 3 and len(seen) == len(set(seen)) == 24


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda cursor: cursor[:-3], "The cursor is not valid"),
        (lambda cursor: "not-a-cursor", "The cursor is not valid"),
        (lambda cursor: cursor + "==" * 300, "The cursor is not valid"),
    ],
)
def test_a_changed_cursor_is_a_400_naming_the_problem(api, data, change, problem):
    cursor = api(q="wren", scope="tenant").json()["next_cursor"]
    response = api(q="wren", scope="tenant", cursor=change(cursor))
    assert response.status_code == 400 and problem in response.json()["error"]


def test_a_cursor_of_another_search_is_a_400(api, data):
    cursor = api(q="wren", scope="tenant").json()["next_cursor"]
    response = api(q="wren number", scope="tenant", cursor=cursor)
    assert response.status_code == 400 and "different search" in response.json()["error"]
