"""`manage.py search` prints the same answer as the API, as JSON or text; bad input is a CommandError."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from search_app import folding
from tests.search_app.factories import make_conversation_with

pytestmark = pytest.mark.django_db


@pytest.fixture
def data(tenant, other_tenant):
    make_conversation_with(tenant, ["the magpie is blue-ish", "no bird here"], external_id="c1", run_id="r1")
    make_conversation_with(tenant, ["a magpie again"], external_id="c2", run_id="r2")
    make_conversation_with(other_tenant, ["globex magpie"], external_id="cx", run_id="rx")
    folding.fold_tenant(tenant.id)  # all in blocks: nothing left to index


def run(*args) -> str:
    out = io.StringIO()
    call_command("search", *args, stdout=out)
    return out.getvalue()


def test_json_output_has_results_indexing_and_truncated(data):
    body = json.loads(run("--tenant", "acme", "--conversation", "c1", "--format", "json", "magpie"))
    assert set(body) >= {"results", "indexing", "truncated", "total_matches", "total_conversations", "next_cursor"}
    assert [(h["conversation_id"], h["run_id"], h["position"]) for h in body["results"]] == [("c1", "r1", 0)]
    assert (body["indexing"], body["truncated"]) == (False, False)


def test_tenant_scope_lists_the_tenants_conversations_only(data):
    body = json.loads(run("--tenant", "acme", "--scope", "tenant", "--format", "json", "magpie"))
    assert sorted(h["conversation_id"] for h in body["results"]) == ["c1", "c2"]


def test_text_output_names_provenance_and_counts(data):
    text = run("--tenant", "acme", "--scope", "tenant", "--run", "r2", "--limit", "5", "magpie")
    assert "conversation c2 run r2 #0 user: a magpie again" in text
    assert text.strip().endswith("1-1 of 1 matching message(s) in 1 conversation(s).")


def test_text_output_pages_with_the_cursor_it_prints(data):
    text = run("--tenant", "acme", "--scope", "tenant", "--limit", "1", "magpie")
    assert "1-1 of 2 matching message(s) in 2 conversation(s); next page: --cursor " in text
    cursor = text.rsplit("--cursor ", 1)[1].strip().rstrip(".")
    second = run("--tenant", "acme", "--scope", "tenant", "--limit", "1", "--cursor", cursor, "magpie")
    assert second.strip().endswith("2-2 of 2 matching message(s) in 2 conversation(s).")
    first_hit, second_hit = text.splitlines()[0], second.splitlines()[0]
    assert first_hit != second_hit and "magpie" in second_hit
    with pytest.raises(CommandError, match="cursor is not valid"):
        run("--tenant", "acme", "--scope", "tenant", "--cursor", cursor + "x", "magpie")


def test_without_a_conversation_the_command_says_why(data):
    assert "needs a conversation id" in run("--tenant", "acme", "magpie")


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["--tenant", "nope", "--conversation", "c1", "magpie"], "No tenant with slug 'nope'"),
        (["--tenant", "acme", "--conversation", "c1", ""], "The query is empty"),
        (["--tenant", "acme", "--conversation", "c1", "--limit", "40", "magpie"], "from 1 to 25"),
    ],
)
def test_bad_input_is_a_command_error_naming_the_problem(data, args, problem):
    with pytest.raises(CommandError, match=problem):
        run(*args)


def test_past_the_count_bound_the_footer_says_plus(data, settings):
    settings.SESSIONDESK_SEARCH_COUNT_BOUND = 1
    text = run("--tenant", "acme", "--scope", "tenant", "--limit", "1", "magpie")
    assert "1-1 of 1+ matching message(s) in 1+ conversation(s); next page: --cursor " in text
