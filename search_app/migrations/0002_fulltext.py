"""The full-text structures, in SQL this app owns, one per database vendor.

PostgreSQL: `tsv` is generated from `terms` with `array_to_tsvector`, which takes the terms as they are (no
parser, no dictionary), so the database never splits or folds a term differently from search_app.tokenize.
The GIN index leads with tenant_id (btree_gin) so a tenant's search never walks another tenant's postings.

SQLite: an external-content FTS5 table over `terms` (no second copy of the text); the `ascii` tokenizer
splits only on ASCII separators, and our terms contain none. Triggers keep it in step with every insert,
update and delete of a search document, whatever code path (or cascade) makes it.
"""

from django.db import migrations

DOCS = "search_app_searchdocument"

POSTGRES_FORWARD = [
    "CREATE EXTENSION IF NOT EXISTS btree_gin",
    f"ALTER TABLE {DOCS} ADD COLUMN tsv tsvector "
    "GENERATED ALWAYS AS (array_to_tsvector(string_to_array(terms, ' '))) STORED",
    f"CREATE INDEX searchdoc_tenant_tsv ON {DOCS} USING gin (tenant_id, tsv)",
]
POSTGRES_BACKWARD = [
    "DROP INDEX IF EXISTS searchdoc_tenant_tsv",
    f"ALTER TABLE {DOCS} DROP COLUMN IF EXISTS tsv",
]

SQLITE_FORWARD = [
    f"CREATE VIRTUAL TABLE search_app_fts USING fts5(terms, content='{DOCS}', content_rowid='entry_id', "
    "tokenize='ascii', detail='none')",
    f"CREATE TRIGGER search_app_fts_insert AFTER INSERT ON {DOCS} BEGIN "
    "INSERT INTO search_app_fts(rowid, terms) VALUES (new.entry_id, new.terms); END",
    f"CREATE TRIGGER search_app_fts_delete AFTER DELETE ON {DOCS} BEGIN "
    "INSERT INTO search_app_fts(search_app_fts, rowid, terms) VALUES ('delete', old.entry_id, old.terms); END",
    f"CREATE TRIGGER search_app_fts_update AFTER UPDATE OF terms ON {DOCS} BEGIN "
    "INSERT INTO search_app_fts(search_app_fts, rowid, terms) VALUES ('delete', old.entry_id, old.terms); "
    "INSERT INTO search_app_fts(rowid, terms) VALUES (new.entry_id, new.terms); END",
]
SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS search_app_fts_update",
    "DROP TRIGGER IF EXISTS search_app_fts_delete",
    "DROP TRIGGER IF EXISTS search_app_fts_insert",
    "DROP TABLE IF EXISTS search_app_fts",
]


def _run(statements_by_vendor):
    def apply(apps, schema_editor):
        for statement in statements_by_vendor.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement)

    return apply


class Migration(migrations.Migration):
    dependencies = [("search_app", "0001_initial")]

    operations = [
        migrations.RunPython(
            _run({"postgresql": POSTGRES_FORWARD, "sqlite": SQLITE_FORWARD}),
            _run({"postgresql": POSTGRES_BACKWARD, "sqlite": SQLITE_BACKWARD}),
        ),
    ]
