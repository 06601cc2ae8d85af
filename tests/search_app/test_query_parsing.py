"""Query syntax: words, phrases, exclusions, prefixes, identifiers, CJK, and the errors for bad queries."""

import unittest

from search_app.query import MAX_QUERY_CHARS, Phrase, Prefix, QueryError, Term, parse_query


class QueryParsingTest(unittest.TestCase):
    def test_words_are_independent_terms_normalised_like_the_index(self):
        parsed = parse_query("Zürich  RÉSUMÉ")
        self.assertEqual(parsed.should, (Term("zurich"), Term("resume")))
        self.assertEqual(parsed.must_not, ())

    def test_quoted_text_is_a_phrase(self):
        self.assertEqual(
            parse_query('"deploy the canary" now').should, (Phrase(("deploy", "the", "canary")), Term("now"))
        )

    def test_an_unterminated_quote_runs_to_the_end(self):
        self.assertEqual(parse_query('"deploy the').should, (Phrase(("deploy", "the")),))

    def test_a_quoted_single_word_is_a_term(self):
        self.assertEqual(parse_query('"Canary"').should, (Term("canary"),))

    def test_identifiers_are_phrases_of_their_parts(self):
        parsed = parse_query("rollback-v2.sh QUOKKA-5521 checkout_v3_enabled")
        self.assertEqual(
            parsed.should,
            (Phrase(("rollback", "v2", "sh")), Phrase(("quokka", "5521")), Phrase(("checkout", "v3", "enabled"))),
        )

    def test_a_minus_excludes_a_word_or_a_phrase(self):
        parsed = parse_query('deploy -staging -"dry run"')
        self.assertEqual(parsed.should, (Term("deploy"),))
        self.assertEqual(parsed.must_not, (Term("staging"), Phrase(("dry", "run"))))

    def test_a_trailing_star_is_a_prefix(self):
        self.assertEqual(parse_query("deplo* -stag*").should, (Prefix("deplo"),))
        self.assertEqual(parse_query("deplo* -stag*").must_not, (Prefix("stag"),))

    def test_a_prefix_after_an_identifier_keeps_the_leading_parts_as_words(self):
        self.assertEqual(parse_query("rollback-ver*").should, (Term("rollback"), Prefix("ver")))
        with self.assertRaisesRegex(QueryError, "too short"):
            parse_query("rollback-v*")

    def test_cjk_runs_become_bigrams_and_single_characters_stay_single(self):
        self.assertEqual(parse_query("数据库").should, (Term("数据"), Term("据库")))
        self.assertEqual(parse_query("数据").should, (Term("数据"),))
        self.assertEqual(parse_query("数").should, (Term("数"),))

    def test_excluding_a_cjk_word_excludes_the_word_not_each_pair(self):
        self.assertEqual(parse_query("部署 -数据库").must_not, (Phrase(("数", "据", "库")),))

    def test_repeated_clauses_count_once(self):
        self.assertEqual(parse_query("canary Canary CANARY").should, (Term("canary"),))

    def test_an_empty_query_is_rejected_with_a_reason(self):
        for query in ("", "   ", "\n"):
            with self.assertRaisesRegex(QueryError, "empty"):
                parse_query(query)

    def test_a_query_of_punctuation_is_rejected_with_a_reason(self):
        with self.assertRaisesRegex(QueryError, "no letters or digits"):
            parse_query("?! -- ...")

    def test_a_query_that_only_excludes_is_rejected(self):
        with self.assertRaisesRegex(QueryError, "only excludes"):
            parse_query("-staging")

    def test_a_query_over_the_length_limit_is_rejected(self):
        parse_query("a" * MAX_QUERY_CHARS)
        with self.assertRaisesRegex(
            QueryError, f"{MAX_QUERY_CHARS + 1} characters long; the limit is {MAX_QUERY_CHARS}"
        ):
            parse_query("a" * (MAX_QUERY_CHARS + 1))

    def test_a_one_letter_prefix_is_rejected(self):
        with self.assertRaisesRegex(QueryError, "at least 2"):
            parse_query("a*")
