"""The full-text structures, in SQL this app owns, one per database vendor.

PostgreSQL: `tsv` is generated from `terms` with `array_to_tsvector`, which takes the terms as they are (no
parser, no dictionary), so the database never splits or folds a term differently from search_app.tokenize.
The GIN index leads with tenant_id (btree_gin) so a tenant's search never walks another tenant's postings.

SQLite: a contentless FTS5 table whose rowid is the document's id (the documents table's rowid) and whose
terms are prefixed with the tenant id; the `ascii` tokenizer splits only on ASCII separators, and our terms
contain none. Triggers keep it in step with every insert, update and delete of a search document, whatever
code path (or cascade) makes it.
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

# Each FTS term is written as t<tenant id>x<term> ("t7xcanary"), so a tenant's search reads only that tenant's
# postings: the FTS5 equivalent of the GIN index leading with tenant_id. Contentless: the terms live in the
# documents table; the delete trigger hands FTS5 the row's old terms, rebuilt the same way.
_PREFIXED = "'t' || {row}.tenant_id || 'x' || replace({row}.terms, ' ', ' t' || {row}.tenant_id || 'x')"

SQLITE_FORWARD = [
    "CREATE VIRTUAL TABLE search_app_fts USING fts5(terms, content='', tokenize='ascii', detail='none')",
    f"CREATE TRIGGER search_app_fts_insert AFTER INSERT ON {DOCS} BEGIN "
    f"INSERT INTO search_app_fts(rowid, terms) VALUES (new.id, {_PREFIXED.format(row='new')}); END",
    f"CREATE TRIGGER search_app_fts_delete AFTER DELETE ON {DOCS} BEGIN "
    f"INSERT INTO search_app_fts(search_app_fts, rowid, terms) VALUES ('delete', old.id, {_PREFIXED.format(row='old')}); "
    "END",
    f"CREATE TRIGGER search_app_fts_update AFTER UPDATE OF terms, tenant_id ON {DOCS} BEGIN "
    f"INSERT INTO search_app_fts(search_app_fts, rowid, terms) VALUES ('delete', old.id, {_PREFIXED.format(row='old')}); "
    f"INSERT INTO search_app_fts(rowid, terms) VALUES (new.id, {_PREFIXED.format(row='new')}); END",
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
