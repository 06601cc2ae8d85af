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
