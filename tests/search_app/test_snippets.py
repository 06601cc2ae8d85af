"""Snippets: at most 300 characters, centred on the match, highlighted from escaped text only."""

import unittest

from search_app.query import parse_query
from search_app.snippets import MAX_SNIPPET_CHARS, make_snippet


class SnippetTest(unittest.TestCase):
    def test_a_short_text_is_shown_whole_with_matches_marked(self):
        snippet = make_snippet("Deploy the Canary & watch", parse_query("canary"))
        self.assertEqual(snippet.text, "Deploy the Canary & watch")
        self.assertEqual(snippet.html, "Deploy the <mark>Canary</mark> &amp; watch")

    def test_markup_in_a_message_is_shown_as_text(self):
        snippet = make_snippet('<script>alert(1)</script><img src=x onerror="steal()"> canary', parse_query("canary"))
        self.assertEqual(
            snippet.html,
            "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=&quot;steal()&quot;&gt; <mark>canary</mark>",
        )

    def test_a_match_marked_inside_markup_is_escaped_too(self):
        snippet = make_snippet("<b onerror=x>", parse_query("onerror"))
        self.assertEqual(snippet.html, "&lt;b <mark>onerror</mark>=x&gt;")

    def test_a_long_text_is_cut_to_300_characters_around_the_first_match(self):
        text = "filler " * 200 + "the QUOKKA-5521 ticket " + "padding " * 200
        snippet = make_snippet(text, parse_query("QUOKKA-5521"))
        self.assertLessEqual(len(snippet.text), MAX_SNIPPET_CHARS)
        self.assertTrue(snippet.text.startswith("…") and snippet.text.endswith("…"))
        middle = snippet.text.index("QUOKKA-5521")
        self.assertLess(abs(middle - len(snippet.text) // 2), 20)
        self.assertIn("<mark>QUOKKA</mark>-<mark>5521</mark>", snippet.html)

    def test_a_match_near_the_start_keeps_the_start(self):
        snippet = make_snippet("canary " + "x " * 400, parse_query("canary"))
        self.assertTrue(snippet.text.startswith("canary"))
        self.assertEqual(len(snippet.text), MAX_SNIPPET_CHARS)

    def test_a_match_near_the_end_keeps_the_end(self):
        snippet = make_snippet("x " * 400 + "canary", parse_query("canary"))
        self.assertTrue(snippet.text.endswith("canary"))
        self.assertEqual(len(snippet.text), MAX_SNIPPET_CHARS)

    def test_without_a_visible_match_the_snippet_is_the_start(self):
        snippet = make_snippet("token=*** and more " * 30, parse_query("hunter2"))
        self.assertTrue(snippet.text.startswith("token=***"))
        self.assertNotIn("<mark>", snippet.html)

    def test_accents_and_case_still_highlight(self):
        self.assertEqual(make_snippet("Zürich", parse_query("zurich")).html, "<mark>Zürich</mark>")

    def test_cjk_bigrams_mark_their_characters(self):
        self.assertEqual(make_snippet("数据库迁移", parse_query("数据")).html, "<mark>数</mark><mark>据</mark>库迁移")

    def test_prefixes_mark_the_words_they_match(self):
        self.assertEqual(
            make_snippet("deploying deployed", parse_query("deploye*")).html, "deploying <mark>deployed</mark>"
        )

    def test_whitespace_runs_are_collapsed(self):
        self.assertEqual(make_snippet("a\n\n  canary\tb", parse_query("canary")).text, "a canary b")
