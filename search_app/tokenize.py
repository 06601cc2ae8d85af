"""The one tokenizer: the same terms at index time and at query time, for PostgreSQL and SQLite alike.

Pure. A term is a run of letters and digits, case-folded, with diacritics removed ("Zürich" -> "zurich",
"résumé" -> "resume"). Punctuation inside identifiers and paths separates terms, so `rollback-v2.sh` is
`rollback v2 sh` and a query for `rollback-v2.sh` becomes the phrase of those terms (see query.py): the
identifier is found whole or by any of its parts. Chinese, Japanese and Korean have no spaces between words,
so a run of those characters is indexed as its single characters plus every adjacent pair (bigram): a one- or
two-character query is then one term that exists in the index.

Every term is made only of characters for which `str.isalnum()` holds and never contains a space: that is
what lets the backends store a document as its terms joined by spaces and hand them to FTS5's `ascii`
tokenizer or to `array_to_tsvector` without either of them splitting or folding a term differently.
"""

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

MAX_TERM_CHARS = 100
"""Longer runs (base64 blobs, minified code) are cut to this, at index and query time alike."""

MAX_DOCUMENT_TERMS = 50_000
MAX_DOCUMENT_CHARS = 400_000
"""A message past this many terms (or characters of terms) is indexed by its first ones: PostgreSQL caps a
tsvector at 1 MiB, and a multi-megabyte tool result would otherwise fail the transaction that stores it."""

_CJK_RANGES = (
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x2E80, 0x2FDF),  # CJK radicals
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3100, 0x312F),  # Bopomofo
    (0x3130, 0x318F),  # Hangul compatibility Jamo
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xA960, 0xA97F),  # Hangul Jamo extended A
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # half-width Katakana
    (0x20000, 0x2FA1F),  # CJK extensions B-F, compatibility supplement
)

# Letters and digits (\w without the underscore). Combining marks are not \w in Python's `re`, so text is
# NFC-composed first; a mark that has no composed form would split a word, which is the safe direction.
_WORD = re.compile(r"[^\W_]+")


def is_cjk(char: str) -> bool:
    code = ord(char)
    if code < 0x1100:  # Latin, Greek, Cyrillic, ...: the common case, decided without the table.
        return False
    return any(low <= code <= high for low, high in _CJK_RANGES)


def normalize_term(raw: str) -> str:
    """Case-folded, compatibility-decomposed, without diacritics; '' when nothing searchable remains."""
    if raw.isascii():  # letters and digits only, nothing to fold but case: the common case, made cheap
        return raw.lower()[:MAX_TERM_CHARS]
    decomposed = unicodedata.normalize("NFKD", raw)
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    folded = unicodedata.normalize("NFKC", stripped.casefold())
    # NFKD can produce punctuation ("⑴" -> "(1)"); dropping it keeps every term alphanumeric only.
    return "".join(c for c in folded if c.isalnum())[:MAX_TERM_CHARS]


@dataclass(frozen=True, slots=True)
class Token:
    """One term of the base stream and where it sits in the (NFC) text it came from."""

    term: str
    start: int
    end: int
    cjk: bool


def prepare(text: str) -> str:
    """The form offsets refer to: NFC, so a decomposed "é" is one character and one word."""
    return unicodedata.normalize("NFC", text)


def _split_run(run: str, offset: int) -> Iterator[Token]:
    """A \\w run may mix scripts ("数据库v2"): CJK characters become one-character tokens, the rest words."""
    if run.isascii():  # no CJK and nothing to fold but case: one word, without a look at each character
        yield Token(run.lower()[:MAX_TERM_CHARS], offset, offset + len(run), False)
        return
    start = None
    for i, char in enumerate(run):
        if is_cjk(char):
            if start is not None:
                term = normalize_term(run[start:i])
                if term:
                    yield Token(term, offset + start, offset + i, False)
                start = None
            # Diacritic removal would strip Japanese voicing marks (が -> か); CJK is only case-folded.
            yield Token(unicodedata.normalize("NFKC", char).casefold(), offset + i, offset + i + 1, True)
        elif start is None:
            start = i
    if start is not None:
        term = normalize_term(run[start:])
        if term:
            yield Token(term, offset + start, offset + len(run), False)


def iter_tokens(text: str, start: int = 0, end: int | None = None) -> Iterator[Token]:
    """The base stream of an already `prepare`d text, lazily, from the word run containing `start` on."""
    end = len(text) if end is None else end
    for match in _WORD.finditer(text, start, end):
        yield from _split_run(match.group(), match.start())


def tokens(text: str) -> list[Token]:
    """The base stream of an already `prepare`d text: words and single CJK characters, in order."""
    return list(iter_tokens(text))


def index_terms(text: str) -> list[str]:
    """What one document is indexed as: the base stream plus a bigram for each adjacent CJK pair.

    Bigrams follow their first character, so the document's terms stay in reading order. A document's
    length for BM25 is the length of this list.
    """
    # Lazily, one token ahead: a text past the caps costs the caps, not its length.
    stream = iter_tokens(prepare(text))
    out: list[str] = []
    chars = 0
    token = next(stream, None)
    while token is not None:
        following = next(stream, None)
        out.append(token.term)
        chars += len(token.term) + 1
        if token.cjk and following is not None and following.cjk and following.start == token.end:
            out.append(token.term + following.term)
        if len(out) >= MAX_DOCUMENT_TERMS or chars >= MAX_DOCUMENT_CHARS:
            break
        token = following
    return out[:MAX_DOCUMENT_TERMS]


def is_bigram(term: str) -> bool:
    """Bigrams are the only two-character CJK terms; the base stream never holds one."""
    return len(term) == 2 and is_cjk(term[0]) and is_cjk(term[1])


def base_stream(terms: list[str]) -> list[str]:
    """The document's terms without bigrams: the sequence phrases are matched against."""
    return [term for term in terms if not is_bigram(term)]
