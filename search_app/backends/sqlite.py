"""SQLite: candidates through the FTS5 table search_app_fts, whose terms carry their tenant (migration 0002)."""

from search_app.backends.base import Lookup, Scope, SqlParams


def fts5_query(tenant_ids: tuple[int, ...], lookup: Lookup) -> str:
    """An FTS5 expression OR-ing each term and prefix in each tenant; quoted so no word reads as an operator."""
    parts = [f'"t{tenant}x{term}"' for term in lookup.terms for tenant in tenant_ids]
    parts += [f'"t{tenant}x{prefix}"*' for prefix in lookup.prefixes for tenant in tenant_ids]
    return " OR ".join(parts)


class SqliteBackend:
    vendor = "sqlite"
    # SQLite's replace() makes in-database term counting slower than fetching the candidates and counting in
    # Python (bench/search.py); PostgreSQL is the other way round.
    ranks_in_database = False

    def candidate_sql(self, scope: Scope, lookup: Lookup) -> tuple[str, SqlParams]:
        if scope.small:
            # A conversation's few thousand rows come by the b-tree index; a substring test in C keeps only the
            # documents holding a query term (the same documents the FTS table would name, so df is unchanged).
            tests = ["instr(' ' || terms || ' ', %s) > 0"] * len(lookup.terms)
            tests += ["instr(' ' || terms, %s) > 0"] * len(lookup.prefixes)
            params: SqlParams = [f" {term} " for term in lookup.terms]
            params += [f" {prefix}" for prefix in lookup.prefixes]
            return f"({' OR '.join(tests)})", params
        return "id IN (SELECT rowid FROM search_app_fts WHERE search_app_fts MATCH %s)", [
            fts5_query(scope.tenant_ids, lookup)
        ]
