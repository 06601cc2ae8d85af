"""PostgreSQL: a postings table (tenant, term, conversation) -> (document, tf, length), read by index-only scans.

Tenant-wide BM25 over a common word visits tens of thousands of documents; reading their rows from the heap
(GIN candidates) costs about 10 us each, reading (tf, length) from this table's primary key costs a fraction of
that. The table is kept by statement-level triggers on the documents table (one INSERT ... SELECT per
statement, from its transition table: no per-row work and no shared row, so writers do not serialise), and
emptied with it on TRUNCATE. The key's third column serves conversation-scoped searches from the same index. SQLite has no such table: at the sizes it is meant for, FTS5 candidates suffice.
"""

from django.db import migrations

DOCS = "search_app_searchdocument"
POSTINGS = "search_app_posting"

FORWARD = [
    f"""CREATE TABLE {POSTINGS} (
        tenant_id bigint NOT NULL,
        term text NOT NULL,
        conversation_id bigint NOT NULL,
        document_id bigint NOT NULL,
        tf integer NOT NULL,
        length integer NOT NULL,
        PRIMARY KEY (tenant_id, term, conversation_id, document_id) INCLUDE (tf, length)
    )""",
    f"""CREATE FUNCTION search_app_postings_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO {POSTINGS} (tenant_id, term, conversation_id, document_id, tf, length)
        SELECT d.tenant_id, t.term, d.conversation_id, d.id, count(*), d.length
        FROM new_docs d CROSS JOIN LATERAL unnest(string_to_array(d.terms, ' ')) AS t(term)
        GROUP BY d.tenant_id, t.term, d.conversation_id, d.id, d.length;
        RETURN NULL;
    END $$""",
    f"""CREATE FUNCTION search_app_postings_delete() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        DELETE FROM {POSTINGS} p
        USING (SELECT DISTINCT o.tenant_id, t.term, o.conversation_id, o.id
               FROM old_docs o CROSS JOIN LATERAL unnest(string_to_array(o.terms, ' ')) AS t(term)) AS x
        WHERE p.tenant_id = x.tenant_id AND p.term = x.term AND p.conversation_id = x.conversation_id
          AND p.document_id = x.id;
        RETURN NULL;
    END $$""",
    f"""CREATE FUNCTION search_app_postings_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        TRUNCATE {POSTINGS};
        RETURN NULL;
    END $$""",
    f"CREATE TRIGGER search_app_postings_insert AFTER INSERT ON {DOCS} REFERENCING NEW TABLE AS new_docs "
    "FOR EACH STATEMENT EXECUTE FUNCTION search_app_postings_insert()",
    f"CREATE TRIGGER search_app_postings_delete AFTER DELETE ON {DOCS} REFERENCING OLD TABLE AS old_docs "
    "FOR EACH STATEMENT EXECUTE FUNCTION search_app_postings_delete()",
    f"CREATE TRIGGER search_app_postings_update_old AFTER UPDATE ON {DOCS} REFERENCING OLD TABLE AS old_docs "
    "FOR EACH STATEMENT EXECUTE FUNCTION search_app_postings_delete()",
    f"CREATE TRIGGER search_app_postings_update_new AFTER UPDATE ON {DOCS} REFERENCING NEW TABLE AS new_docs "
    "FOR EACH STATEMENT EXECUTE FUNCTION search_app_postings_insert()",
    f"CREATE TRIGGER search_app_postings_truncate AFTER TRUNCATE ON {DOCS} "
    "FOR EACH STATEMENT EXECUTE FUNCTION search_app_postings_truncate()",
    f"""INSERT INTO {POSTINGS} (tenant_id, term, conversation_id, document_id, tf, length)
        SELECT d.tenant_id, t.term, d.conversation_id, d.id, count(*), d.length
        FROM {DOCS} d CROSS JOIN LATERAL unnest(string_to_array(d.terms, ' ')) AS t(term)
        GROUP BY d.tenant_id, t.term, d.conversation_id, d.id, d.length""",
]

BACKWARD = [
    f"DROP TRIGGER IF EXISTS search_app_postings_truncate ON {DOCS}",
    f"DROP TRIGGER IF EXISTS search_app_postings_update_new ON {DOCS}",
    f"DROP TRIGGER IF EXISTS search_app_postings_update_old ON {DOCS}",
    f"DROP TRIGGER IF EXISTS search_app_postings_delete ON {DOCS}",
    f"DROP TRIGGER IF EXISTS search_app_postings_insert ON {DOCS}",
    "DROP FUNCTION IF EXISTS search_app_postings_truncate()",
    "DROP FUNCTION IF EXISTS search_app_postings_delete()",
    "DROP FUNCTION IF EXISTS search_app_postings_insert()",
    f"DROP TABLE IF EXISTS {POSTINGS}",
]


def _on_postgres(statements):
    def apply(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            for statement in statements:
                schema_editor.execute(statement)

    return apply


class Migration(migrations.Migration):
    dependencies = [("search_app", "0003_mark_existing_pending")]

    operations = [migrations.RunPython(_on_postgres(FORWARD), _on_postgres(BACKWARD))]
