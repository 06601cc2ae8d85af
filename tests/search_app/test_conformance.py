"""The conformance suite: the same cases, the same expected answers, on SQLite (FTS5) and PostgreSQL (GIN).

`make test` runs this module on both databases; a case whose answer differs between backends fails on one.
"""

from datetime import timedelta

import pytest

from search_app.service import run_search
from tests.search_app.factories import (
    BASE_TIME,
    add_messages,
    assistant,
    make_conversation,
    make_run,
    tool_call,
    tool_result,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("ranking")]

MESSAGES = [
    "Please roll back the checkout service in Zürich",  # 0 user
    assistant("I will run rollback-v2.sh for ticket QUOKKA-5521."),  # 1 assistant
    tool_call("shell", {"command": "./rollback-v2.sh --env zurich"}),  # 2 tool_call
    tool_result("shell", "rollback complete; flag checkout_v3_enabled is now false"),  # 3 tool_result
    "Send the résumé of the incident to the team",  # 4 user
    assistant("数据库迁移已完成，日本語のテストもOK"),  # 5 assistant
    assistant("The canary deploy failed twice; the canary is red. Do not deploy the canary again."),  # 6
    "deploy to staging, not production",  # 7 user
    assistant("Deploying now. deployment id dep-88"),  # 8 assistant
]


@pytest.fixture
def conversation(tenant):
    conversation = make_conversation(tenant, "conf")
    first = make_run(conversation, "run-a", agent_name="ops")
    add_messages(first, MESSAGES[:5], start=BASE_TIME)
    second = make_run(conversation, "run-b", agent_name="writer")
    add_messages(second, MESSAGES[5:], start=BASE_TIME + timedelta(hours=1))
    return conversation


def positions(tenant, query, **options):
    response = run_search(tenant=tenant, query=query, conversation_id="conf", **options)
    return [hit.position for hit in response.results]


CASES = [
    ("zurich", [2, 0]),  # without its umlaut; shorter documents first
    ("Zürich", [2, 0]),
    ("resume", [4]),  # résumé
    ("rollback-v2.sh", [2, 1]),
    ("QUOKKA-5521", [1]),
    ("quokka", [1]),
    ("5521", [1]),
    ("checkout_v3_enabled", [3]),
    ("数据", [5]),  # a two-character query
    ("数", [5]),  # a one-character query
    ("迁移", [5]),
    ("日本語", [5]),
    ("canary", [6]),
    ('"canary deploy"', [6]),
    ('"deploy canary"', []),  # a phrase in the wrong order does not match
    ("deploy", [7, 6]),
    ("deploy -staging", [6]),
    ('deploy -"canary is red"', [7]),
    ("deploy*", [8, 7, 6]),
    ("deploym*", [8]),
    ("nothinglikethis", []),
    ("rollback zurich", [2, 0, 3, 1]),
]


@pytest.mark.parametrize(("query", "expected"), CASES, ids=[case[0] for case in CASES])
def test_the_backend_answers_each_case_as_specified(tenant, conversation, query, expected):
    assert positions(tenant, query) == expected


def test_role_filters_keep_only_those_roles(tenant, conversation):
    assert sorted(positions(tenant, "rollback", roles=["tool_call", "tool_result"])) == [2, 3]
    assert positions(tenant, "rollback", roles=["assistant"]) == [1]


def test_the_run_filter_keeps_one_run(tenant, conversation):
    assert sorted(positions(tenant, "deploy* rollback", run_id="run-b")) == [6, 7, 8]


def test_the_agent_filter_keeps_that_agents_runs(tenant, conversation):
    assert sorted(positions(tenant, "deploy rollback", agent="ops")) == [1, 2, 3]
    assert sorted(positions(tenant, "deploy rollback", agent="writer")) == [6, 7]


def test_the_time_range_is_inclusive_of_since_and_exclusive_of_until(tenant, conversation):
    since = BASE_TIME + timedelta(minutes=1)
    until = BASE_TIME + timedelta(minutes=3)
    assert sorted(positions(tenant, "rollback", since=since, until=until)) == [1, 2]


def test_scores_are_identical_across_calls(tenant, conversation):
    first = run_search(tenant=tenant, query="deploy canary", conversation_id="conf")
    second = run_search(tenant=tenant, query="deploy canary", conversation_id="conf")
    assert [(h.entry_id, h.score) for h in first.results] == [(h.entry_id, h.score) for h in second.results]


def test_each_result_carries_its_provenance(tenant, conversation):
    (hit,) = run_search(tenant=tenant, query="QUOKKA-5521", conversation_id="conf").results
    assert (hit.conversation_id, hit.run_id, hit.position, hit.role, hit.agent) == (
        "conf",
        "run-a",
        1,
        "assistant",
        "ops",
    )
    assert hit.timestamp == BASE_TIME + timedelta(minutes=1)
    assert hit.score > 0
    assert hit.snippet == "I will run rollback-v2.sh for ticket QUOKKA-5521."
    assert hit.snippet_html == "I will run rollback-v2.sh for ticket <mark>QUOKKA</mark>-<mark>5521</mark>."


def test_a_repeated_phrase_counts_its_non_overlapping_occurrences(tenant):
    run = make_run(make_conversation(tenant, "rep"), "run-rep")
    add_messages(run, ["la la la la la", "la la", "la la la"])
    response = run_search(tenant=tenant, query='"la la"', conversation_id="rep")
    by_position = {hit.position: hit.score for hit in response.results}
    # Occurrences: 2, 1 and 1; the three-word message is longer than the two-word one, so it scores lower.
    assert sorted(by_position) == [0, 1, 2]
    assert by_position[1] > by_position[2]


@pytest.mark.parametrize(
    "query",
    [
        '"la la"',
        "la",
        "rollback zurich",
        "deploy -staging",
        "rollback deploy -zurich -canary",
        '"canary deploy" -staging',
        'deploy -"canary is red"',
        "数据",
    ],
)
def test_the_database_ranker_and_the_python_ranker_give_identical_answers(tenant, conversation, settings, query):
    run = make_run(make_conversation(tenant, "rep2"), "run-rep2")
    add_messages(run, ["la la la la la", "la la", "la la la"])
    answers = []
    for in_database in (True, False):
        settings.SESSIONDESK_SEARCH_SQL_RANKING = in_database
        response = run_search(tenant=tenant, query=query, scope="tenant", limit=25)
        answers.append([(hit.entry_id, round(hit.score, 9)) for hit in response.results])
    assert answers[0] == answers[1]
    assert answers[0]
