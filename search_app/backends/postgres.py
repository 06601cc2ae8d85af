"""PostgreSQL: candidates through the GIN index on (tenant_id, tsv), tsquery built from our own terms."""

from django.db.models import BooleanField
from django.db.models.expressions import RawSQL

from search_app.backends.base import CANDIDATE_FIELDS, Candidate, Lookup, Scope, rows_to_candidates
from search_app.models import SearchDocument


def tsquery(lookup: Lookup) -> str:
    """A tsquery literal OR-ing the terms and prefixes; terms are alphanumeric, so quoting is plain."""
    parts = [f"'{term}'" for term in lookup.terms] + [f"'{prefix}':*" for prefix in lookup.prefixes]
    return " | ".join(parts)


class PostgresBackend:
    vendor = "postgresql"

    def candidate_sql(self, lookup: Lookup) -> tuple[str, list]:
        return "tsv @@ %s::tsquery", [tsquery(lookup)]

    def candidates(self, scope: Scope, lookup: Lookup) -> list[Candidate]:
        matches = RawSQL(*self.candidate_sql(lookup), output_field=BooleanField())
        rows = SearchDocument.objects.filter(scope.as_q()).filter(matches).values_list(*CANDIDATE_FIELDS)
        return rows_to_candidates(rows)
