"""On a Citus coordinator, the search tail and the tombstones are kept by row-level triggers.

The statement-level triggers of 0005 read their transition tables (new_docs, old_docs); on a distributed table
Citus runs a trigger on each shard, and a statement the trigger sends on to another table is planned again by
Citus, which cannot see the shard's transition table ("executor could not find named tuplestore", measured on
Citus 13.2.2). The row-level triggers do the same per row: the tail row of every inserted document; the delete
removes the tail row and tombstones the document only when it found none (a fold holding the tail row's lock makes
it wait, then see the row gone). Plain PostgreSQL keeps the statement-level triggers (one INSERT ... SELECT per
statement: no per-row work), SQLite its own. `distribute_tenants` re-creates these triggers on every shard.
"""

from django.db import migrations

DOCS = "search_app_searchdocument"
TAIL = "search_app_unfoldeddocument"
TOMBSTONES = "search_app_deleteddocument"

FORWARD = [
    f"DROP TRIGGER IF EXISTS search_app_tail_insert ON {DOCS}",
    f"DROP TRIGGER IF EXISTS search_app_tombstone ON {DOCS}",
    f"""CREATE FUNCTION search_app_tail_insert_row() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO {TAIL} (document_id, tenant_id) VALUES (NEW.id, NEW.tenant_id);
        RETURN NULL;
    END $$""",
    f"""CREATE FUNCTION search_app_tombstone_row() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        DELETE FROM {TAIL} WHERE tenant_id = OLD.tenant_id AND document_id = OLD.id;
        IF NOT FOUND THEN
            INSERT INTO {TOMBSTONES} (document_id, tenant_id, terms) VALUES (OLD.id, OLD.tenant_id, OLD.terms)
            ON CONFLICT DO NOTHING;
        END IF;
        RETURN NULL;
    END $$""",
    f"CREATE TRIGGER search_app_tail_insert AFTER INSERT ON {DOCS} "
    "FOR EACH ROW EXECUTE FUNCTION search_app_tail_insert_row()",
    f"CREATE TRIGGER search_app_tombstone AFTER DELETE ON {DOCS} "
    "FOR EACH ROW EXECUTE FUNCTION search_app_tombstone_row()",
]
BACKWARD = [
    f"DROP TRIGGER IF EXISTS search_app_tombstone ON {DOCS}",
    f"DROP TRIGGER IF EXISTS search_app_tail_insert ON {DOCS}",
    "DROP FUNCTION IF EXISTS search_app_tombstone_row()",
    "DROP FUNCTION IF EXISTS search_app_tail_insert_row()",
    f"CREATE TRIGGER search_app_tail_insert AFTER INSERT ON {DOCS} REFERENCING NEW TABLE AS new_docs "
    "FOR EACH STATEMENT EXECUTE FUNCTION search_app_tail_insert()",
    f"CREATE TRIGGER search_app_tombstone AFTER DELETE ON {DOCS} REFERENCING OLD TABLE AS old_docs "
    "FOR EACH STATEMENT EXECUTE FUNCTION search_app_tombstone()",
]


def _on_citus(statements):
    def apply(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        with schema_editor.connection.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'citus'")
            if cursor.fetchone() is None:
                return
        for statement in statements:
            schema_editor.execute(statement)

    return apply


class Migration(migrations.Migration):
    dependencies = [("search_app", "0006_tenant_partitions")]

    operations = [migrations.RunPython(_on_citus(FORWARD), _on_citus(BACKWARD))]
