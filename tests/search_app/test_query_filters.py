"""The query syntax's filters (`conversation:`, `run:`, `agent:`, `tool:`, `role:`), pure; hostile strings either
parse or raise QueryError, never anything else."""

import unittest

from hypothesis import given, settings
from hypothesis import strategies as st

from search_app.query import MAX_QUERY_CHARS, ParsedQuery, QueryError, QueryFilters, Term, parse_query


class QueryFiltersTest(unittest.TestCase):
    def test_each_key_sets_its_filter_and_the_words_stay_words(self):
        parsed = parse_query('deploy conversation:conv-1 run:run-7 agent:"release bot" tool:get_weather role:user')
        self.assertEqual(parsed.should, (Term("deploy"),))
        self.assertEqual(
            parsed.filters,
            QueryFilters(conversation="conv-1", run="run-7", agent="release bot", tool="get_weather", roles=("user",)),
        )

    def test_keys_are_case_insensitive_and_values_kept_as_written(self):
        self.assertEqual(parse_query("x RUN:Run-A").filters.run, "Run-A")

    def test_several_roles_mean_any_of_them(self):
        self.assertEqual(parse_query("x role:user role:TOOL_RESULT role:user").filters.roles, ("user", "tool_result"))

    def test_a_query_without_filters_has_none(self):
        self.assertEqual(parse_query("deploy").filters, QueryFilters())

    def test_unknown_keys_and_colons_inside_words_are_text(self):
        parsed = parse_query("http://example.com rerun:x")
        self.assertEqual(parsed.filters, QueryFilters())
        self.assertEqual(len(parsed.should), 2)

    def test_a_quoted_filter_is_searched_as_text(self):
        parsed = parse_query('"role:user"')
        self.assertEqual(parsed.filters, QueryFilters())
        self.assertEqual(len(parsed.should), 1)

    def test_only_filters_is_refused_with_a_reason(self):
        with self.assertRaisesRegex(QueryError, "only has filters"):
            parse_query("run:abc role:user")

    def test_a_filter_without_a_value_is_refused(self):
        for query in ("x role:", 'x run:""', "x agent:   "):
            with self.assertRaisesRegex(QueryError, "has no value"):
                parse_query(query)

    def test_a_negated_filter_is_refused(self):
        with self.assertRaisesRegex(QueryError, "cannot exclude"):
            parse_query("x -role:user")

    def test_two_values_for_a_single_filter_are_refused(self):
        with self.assertRaisesRegex(QueryError, "2 values for 'run:'"):
            parse_query("x run:a run:b")
        self.assertEqual(parse_query("x run:a run:a").filters.run, "a")

    def test_an_overlong_value_is_refused(self):
        with self.assertRaisesRegex(QueryError, "the limit is 400"):
            parse_query("x agent:" + "a" * 401)


FRAGMENTS = st.sampled_from(
    [
        "conversation:",
        "run:",
        "agent:",
        "tool:",
        "role:",
        "ROLE:",
        "-",
        '"',
        "*",
        ":",
        " ",
        "-run:",
        "数据",
        "\x00",
        "é",
    ]
)


class HostileQueriesTest(unittest.TestCase):
    @settings(max_examples=400, deadline=None)
    @given(st.lists(st.one_of(FRAGMENTS, st.text(max_size=12)), max_size=12).map("".join))
    def test_any_text_parses_or_says_why(self, query):
        try:
            parsed = parse_query(query)
        except QueryError as error:
            self.assertTrue(str(error))
            return
        self.assertIsInstance(parsed, ParsedQuery)
        self.assertTrue(parsed.should)
        for value in (parsed.filters.conversation, parsed.filters.run, parsed.filters.agent, parsed.filters.tool):
            self.assertTrue(value is None or (value and value == value.strip()))

    @settings(max_examples=50, deadline=None)
    @given(st.text(min_size=MAX_QUERY_CHARS + 1, max_size=MAX_QUERY_CHARS + 50))
    def test_an_overlong_query_is_refused(self, query):
        with self.assertRaisesRegex(QueryError, "limit"):
            parse_query(query)
