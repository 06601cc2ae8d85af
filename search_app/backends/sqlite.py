"""SQLite: candidates through the FTS5 table search_app_fts (rowid = transcript entry id)."""

from django.db.models import BooleanField
from django.db.models.expressions import RawSQL

from search_app.backends.base import CANDIDATE_FIELDS, Candidate, Lookup, Scope, rows_to_candidates
from search_app.models import SearchDocument


def fts5_query(lookup: Lookup) -> str:
    """An FTS5 expression OR-ing the terms and prefixes; each term is quoted so no word reads as an operator."""
    parts = [f'"{term}"' for term in lookup.terms] + [f'"{prefix}"*' for prefix in lookup.prefixes]
    return " OR ".join(parts)


class SqliteBackend:
    vendor = "sqlite"

    def candidate_sql(self, lookup: Lookup) -> tuple[str, list]:
        return "entry_id IN (SELECT rowid FROM search_app_fts WHERE search_app_fts MATCH %s)", [fts5_query(lookup)]

    def candidates(self, scope: Scope, lookup: Lookup) -> list[Candidate]:
        matches = RawSQL(*self.candidate_sql(lookup), output_field=BooleanField())
        rows = SearchDocument.objects.filter(scope.as_q()).filter(matches).values_list(*CANDIDATE_FIELDS)
        return rows_to_candidates(rows)
