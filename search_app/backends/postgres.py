"""PostgreSQL: candidates through the GIN index on (tenant_id, tsv), tsquery built from our own terms."""

from search_app.backends.base import Lookup, Scope, SqlParams


def tsquery(lookup: Lookup) -> str:
    """A tsquery literal OR-ing the terms and prefixes; terms are alphanumeric, so quoting is plain."""
    parts = [f"'{term}'" for term in lookup.terms] + [f"'{prefix}':*" for prefix in lookup.prefixes]
    return " | ".join(parts)


class PostgresBackend:
    vendor = "postgresql"
    ranks_in_database = True

    def candidate_sql(self, scope: Scope, lookup: Lookup) -> tuple[str, SqlParams]:
        # Also for a conversation: the planner reads its rows by the b-tree index and checks each tsvector.
        return "tsv @@ %s::tsquery", [tsquery(lookup)]
