"""A plain, independent BM25 (Lucene's formula) to check search_app.bm25 against: dictionaries and loops only."""

import math


def reference_rank(docs: dict[int, list[str]], query_terms: list[str], k1: float = 1.2, b: float = 0.75):
    n = len(docs)
    avgdl = sum(len(terms) for terms in docs.values()) / n
    unique_terms = list(dict.fromkeys(query_terms))
    df = {term: sum(1 for terms in docs.values() if term in terms) for term in unique_terms}
    scores = {}
    for key, terms in docs.items():
        total = 0.0
        for term in unique_terms:
            tf = terms.count(term)
            if tf == 0:
                continue
            idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
            total += idf * tf / (tf + k1 * (1 - b + b * len(terms) / avgdl))
        if total > 0:
            scores[key] = total
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def _phrase_count(terms: list[str], phrase: tuple[str, ...]) -> int:
    """Non-overlapping occurrences of `phrase` as consecutive terms, scanning left to right."""
    count, i, n = 0, 0, len(phrase)
    while i + n <= len(terms):
        if tuple(terms[i : i + n]) == phrase:
            count += 1
            i += n
        else:
            i += 1
    return count


def reference_rank_clauses(
    docs: dict[int, list[str]],
    should: list[str | tuple[str, ...]],
    must_not: list[str | tuple[str, ...]] = (),
    k1: float = 1.2,
    b: float = 0.75,
):
    """Words (str) and phrases (tuples) score; a document holding any `must_not` word or phrase is left out.

    A phrase scores with the sum of its words' idf and its own frequency, as Lucene's phrase query does.
    """
    n = len(docs)
    avgdl = sum(len(terms) for terms in docs.values()) / n
    words = {w for clause in should for w in ((clause,) if isinstance(clause, str) else clause)}
    df = {w: sum(1 for terms in docs.values() if w in terms) for w in words}

    def idf(word):
        return math.log(1 + (n - df[word] + 0.5) / (df[word] + 0.5))

    def frequency(terms, clause):
        return terms.count(clause) if isinstance(clause, str) else _phrase_count(terms, clause)

    scores = {}
    for key, terms in docs.items():
        if any(frequency(terms, clause) for clause in must_not):
            continue
        total = 0.0
        for clause in should:
            f = frequency(terms, clause)
            if f == 0:
                continue
            weight = idf(clause) if isinstance(clause, str) else sum(idf(w) for w in clause)
            total += weight * f / (f + k1 * (1 - b + b * len(terms) / avgdl))
        if total > 0:
            scores[key] = total
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))
