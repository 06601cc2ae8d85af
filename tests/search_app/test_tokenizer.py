"""The one tokenizer: what a text is indexed as, and what a query word becomes."""

import unittest

from search_app.tokenize import (
    MAX_DOCUMENT_CHARS,
    MAX_DOCUMENT_TERMS,
    MAX_TERM_CHARS,
    base_stream,
    index_terms,
    is_bigram,
)


class TokenizerTest(unittest.TestCase):
    def test_it_folds_case_and_removes_diacritics(self):
        self.assertEqual(
            index_terms("Résumé from ZÜRICH, naïve Straße"), ["resume", "from", "zurich", "naive", "strasse"]
        )

    def test_a_decomposed_accent_reads_like_a_composed_one(self):
        self.assertEqual(index_terms("re\u0301sume\u0301"), index_terms("résumé"))

    def test_identifiers_and_paths_are_split_into_their_parts_in_order(self):
        self.assertEqual(
            index_terms("run rollback-v2.sh for QUOKKA-5521 if checkout_v3_enabled at /srv/app/main.py"),
            [
                "run",
                "rollback",
                "v2",
                "sh",
                "for",
                "quokka",
                "5521",
                "if",
                "checkout",
                "v3",
                "enabled",
                "at",
                "srv",
                "app",
                "main",
                "py",
            ],
        )

    def test_chinese_is_indexed_as_characters_and_adjacent_pairs(self):
        self.assertEqual(index_terms("数据库"), ["数", "数据", "据", "据库", "库"])

    def test_cjk_pairs_do_not_cross_a_gap(self):
        self.assertEqual(index_terms("数 据"), ["数", "据"])

    def test_japanese_voicing_marks_are_kept(self):
        self.assertEqual(index_terms("がか"), ["が", "がか", "か"])

    def test_mixed_scripts_in_one_word_are_separated(self):
        self.assertEqual(index_terms("数据v2版"), ["数", "数据", "据", "v2", "版"])

    def test_every_term_is_alphanumeric_and_never_holds_a_space(self):
        text = "⑴ ﬁle ＡＢＣ １２３ e\u0301 İstanbul ½ ___ -- x\u200by 🙂 Ⅻ"
        for term in index_terms(text):
            self.assertTrue(term and all(c.isalnum() for c in term), term)
        self.assertIn("file", index_terms(text))
        self.assertIn("abc", index_terms(text))
        self.assertIn("istanbul", index_terms(text))

    def test_very_long_runs_are_cut_to_the_term_limit(self):
        (term,) = index_terms("a" * 500)
        self.assertEqual(len(term), MAX_TERM_CHARS)

    def test_a_huge_message_is_indexed_by_its_first_terms(self):
        self.assertEqual(len(index_terms("word " * (MAX_DOCUMENT_TERMS + 10))), MAX_DOCUMENT_TERMS)
        long_terms = index_terms(" ".join(f"{i:0100d}" for i in range(20_000)))
        self.assertLessEqual(sum(len(term) + 1 for term in long_terms), MAX_DOCUMENT_CHARS + MAX_TERM_CHARS + 1)

    def test_the_phrase_stream_leaves_out_bigrams(self):
        terms = index_terms("hello 数据库")
        self.assertEqual(base_stream(terms), ["hello", "数", "据", "库"])
        self.assertTrue(is_bigram("数据"))
        self.assertFalse(is_bigram("ab"))

    def test_punctuation_and_markup_are_not_terms(self):
        self.assertEqual(index_terms('<img src=x onerror="alert(1)">'), ["img", "src", "x", "onerror", "alert", "1"])


def test_a_text_past_the_caps_is_read_only_to_the_caps(monkeypatch):
    # A 1 MB part of one-letter words once built every token before cutting (about 1 s): the cost is the cap's.
    from search_app import tokenize

    read = 0
    whole = tokenize.iter_tokens

    def counted(text: str):
        nonlocal read
        for token in whole(text):
            read += 1
            yield token

    monkeypatch.setattr(tokenize, "iter_tokens", counted)
    for words in (tokenize.MAX_DOCUMENT_TERMS * 2, tokenize.MAX_DOCUMENT_TERMS * 20):
        read = 0
        terms = tokenize.index_terms("a " * words)
        assert len(terms) == tokenize.MAX_DOCUMENT_TERMS
        assert read <= tokenize.MAX_DOCUMENT_TERMS + 1


def test_the_lazy_stream_keeps_cjk_bigrams_and_order():
    from search_app.tokenize import index_terms

    assert index_terms("数据库v2 Ünïcödé") == ["数", "数据", "据", "据库", "库", "v2", "unicode"]
