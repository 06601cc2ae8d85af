"""PostgreSQL: tenant-qualified keys on every tenant-owned table, and the largest tables hash-partitioned by tenant.

What a partitioned table (and a Citus distributed one) requires of its keys: the primary key and every unique key
contain the partition column, and a foreign key to it names the whole key. So, on PostgreSQL only:

1. every foreign key between tenant-owned tables is dropped,
2. every primary key and unique key of a tenant-owned table gets `tenant_id` in front,
3. the largest tables (TENANT_PARTITIONED) are rebuilt as `PARTITION BY HASH (tenant_id)` with PARTITIONS
   partitions, their rows, indexes, constraints and triggers carried over, and their ids continuing from the same
   sequence value (PostgreSQL 15 has no identity columns on partitioned tables, so ids come from a sequence the
   column owns),
4. the foreign keys come back as (tenant_id, column) -> (tenant_id, key), so no row can point into another tenant;
   except the three into a partitioned table (a transcript entry's and a snapshot reference's message, a search
   document's entry). PostgreSQL 15 checks each row of such a key with a generic plan over the partitioned table,
   which takes a lock on every partition and its index per row: measured, the commit of 30,000 transcript entries
   with their search documents took 0.93 to 1.15 s with these keys and 0.57 to 0.60 s without (0.63 to 0.66 s on
   the plain schema), and the million-message benchmark's bulk load was four to ten times slower. Those rows are
   written in the transaction that writes what they point to, by one code path each, and every read joins them
   with the tenant named on both sides, so a wrong reference could not show another tenant's row.

Django's model state still says `id` is the primary key: ids stay unique (one sequence per table), and the ORM
identifies rows by them. Tables that are not partitioned keep a plain index on `id` for the ORM's lookups by id
alone. A table is tenant-owned when it has a `tenant_id` column, except REFERENCE_TABLES: API keys and invitations
are found by a secret's hash, and memberships by the signed-in user, before the tenant is known, so they keep keys
of their own, and on Citus they are reference tables (docs/SCALING.md). SQLite keeps the plain tables and keys.
"""

from django.db import migrations

PARTITIONS = 16
TENANT_PARTITIONED = [
    "sessions_app_storedmessage",
    "sessions_app_snapshotmessage",
    "sessions_app_transcriptentry",
    "search_app_searchdocument",
    "search_app_postingblock",
]
REFERENCE_TABLES = {"sessions_app_tenant", "sessions_app_apikey", "sessions_app_invitation", "sessions_app_membership"}
TAIL = "search_app_unfoldeddocument"
TOMBSTONES = "search_app_deleteddocument"


def tenant_owned_tables(cursor) -> list[str]:
    cursor.execute(
        """SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped
        WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition
        AND (c.relname LIKE 'sessions\\_app\\_%%' OR c.relname LIKE 'search\\_app\\_%%') ORDER BY c.relname"""
    )
    return [name for (name,) in cursor.fetchall() if name not in REFERENCE_TABLES]


def _columns(cursor, constraint_oid: int, key: str) -> list[str]:
    cursor.execute(
        f"""SELECT a.attname FROM pg_constraint c, unnest(c.{key}) WITH ORDINALITY k(attnum, ord)
        JOIN pg_attribute a ON a.attnum = k.attnum
        WHERE c.oid = %s AND a.attrelid = CASE WHEN %s = 'conkey' THEN c.conrelid ELSE c.confrelid END
        ORDER BY k.ord""",
        [constraint_oid, key],
    )
    return [name for (name,) in cursor.fetchall()]


def _quote(names: list[str]) -> str:
    return ", ".join(f'"{name}"' for name in names)


def tenant_keys(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        tables = tenant_owned_tables(cursor)
        cursor.execute(
            """SELECT c.oid, c.conname, c.conrelid::regclass::text, c.confrelid::regclass::text
            FROM pg_constraint c WHERE c.contype = 'f' AND c.conrelid::regclass::text = ANY(%s)
            AND c.confrelid::regclass::text = ANY(%s)""",
            [tables, tables],
        )
        foreign_keys = [
            (name, table, _columns(cursor, oid, "conkey"), target, _columns(cursor, oid, "confkey"))
            for oid, name, table, target in cursor.fetchall()
        ]
        for name, table, *_ in foreign_keys:
            cursor.execute(f'ALTER TABLE "{table}" DROP CONSTRAINT "{name}"')
        for table in tables:
            cursor.execute(
                """SELECT oid, conname, contype FROM pg_constraint WHERE conrelid = %s::regclass
                AND contype IN ('p', 'u') ORDER BY contype""",
                [table],
            )
            for oid, name, kind in cursor.fetchall():
                columns = _columns(cursor, oid, "conkey")
                if "tenant_id" in columns:
                    continue
                cursor.execute(f'ALTER TABLE "{table}" DROP CONSTRAINT "{name}"')
                key = "PRIMARY KEY" if kind == "p" else "UNIQUE"
                cursor.execute(f'ALTER TABLE "{table}" ADD CONSTRAINT "{name}" {key} ("tenant_id", {_quote(columns)})')
                if kind == "p" and table not in TENANT_PARTITIONED:
                    cursor.execute(f'CREATE INDEX "{table}_by_{columns[0]}" ON "{table}" ({_quote(columns)})')
        for table in TENANT_PARTITIONED:
            _partition_by_tenant(cursor, table)
        for name, table, columns, target, target_columns in foreign_keys:
            if columns[0] == "tenant_id" or target in TENANT_PARTITIONED:
                continue
            cursor.execute(
                f'ALTER TABLE "{table}" ADD CONSTRAINT "{name}" FOREIGN KEY ("tenant_id", {_quote(columns)}) '
                f'REFERENCES "{target}" ("tenant_id", {_quote(target_columns)}) DEFERRABLE INITIALLY DEFERRED'
            )
        # The tombstone trigger finds a deleted document's tail row by its whole key now.
        cursor.execute(
            f"""CREATE OR REPLACE FUNCTION search_app_tombstone() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                WITH gone AS (
                    DELETE FROM {TAIL} t USING old_docs o
                    WHERE t.tenant_id = o.tenant_id AND t.document_id = o.id RETURNING t.document_id
                )
                INSERT INTO {TOMBSTONES} (document_id, tenant_id, terms)
                SELECT o.id, o.tenant_id, o.terms FROM old_docs o WHERE o.id NOT IN (SELECT document_id FROM gone)
                ON CONFLICT DO NOTHING;
                RETURN NULL;
            END $$"""
        )


def _partition_by_tenant(cursor, table: str) -> None:
    """Rebuild `table` as PARTITION BY HASH (tenant_id): same columns, rows, keys, indexes, triggers and ids."""
    cursor.execute(
        "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped "
        "AND attgenerated = '' ORDER BY attnum",
        [table],
    )
    columns = _quote([name for (name,) in cursor.fetchall()])
    cursor.execute(
        "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = %s::regclass "
        "AND contype IN ('p', 'u', 'f', 'x') ORDER BY contype DESC",
        [table],
    )
    constraints = cursor.fetchall()
    cursor.execute(
        "SELECT pg_get_indexdef(i.indexrelid) FROM pg_index i WHERE i.indrelid = %s::regclass "
        "AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid AND c.conrelid = i.indrelid)",
        [table],
    )
    indexes = [definition for (definition,) in cursor.fetchall()]
    cursor.execute(
        "SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgrelid = %s::regclass AND NOT tgisinternal", [table]
    )
    triggers = [definition for (definition,) in cursor.fetchall()]
    cursor.execute("SELECT pg_get_serial_sequence(%s, 'id')", [table])
    (sequence,) = cursor.fetchone()
    next_id = None
    if sequence:
        cursor.execute(f"SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END FROM {sequence}")
        (next_id,) = cursor.fetchone()
    cursor.execute(
        f'CREATE TABLE "{table}__partitioned" (LIKE "{table}" INCLUDING DEFAULTS INCLUDING GENERATED '
        f"INCLUDING CONSTRAINTS INCLUDING STORAGE) PARTITION BY HASH (tenant_id)"
    )
    for remainder in range(PARTITIONS):
        cursor.execute(
            f'CREATE TABLE "{table}_p{remainder:02d}" PARTITION OF "{table}__partitioned" '
            f"FOR VALUES WITH (MODULUS {PARTITIONS}, REMAINDER {remainder})"
        )
    cursor.execute(f'INSERT INTO "{table}__partitioned" ({columns}) SELECT {columns} FROM "{table}"')
    cursor.execute(f'DROP TABLE "{table}"')
    cursor.execute(f'ALTER TABLE "{table}__partitioned" RENAME TO "{table}"')
    if next_id is not None:
        cursor.execute(f'CREATE SEQUENCE "{table}_id_seq" OWNED BY "{table}"."id"')
        cursor.execute(f"SELECT setval('\"{table}_id_seq\"', %s, false)", [next_id])
        cursor.execute(f'ALTER TABLE "{table}" ALTER COLUMN "id" SET DEFAULT nextval(\'"{table}_id_seq"\')')
    for name, definition in constraints:
        cursor.execute(f'ALTER TABLE "{table}" ADD CONSTRAINT "{name}" {definition}')
    for statement in indexes + triggers:
        cursor.execute(statement)
    cursor.execute(f'ANALYZE "{table}"')


class Migration(migrations.Migration):
    # One transaction: a failure leaves the plain schema as it was.
    atomic = True

    dependencies = [
        ("search_app", "0005_blocks"),
        ("sessions_app", "0013_tenant_keys"),
    ]

    operations = [migrations.RunPython(tenant_keys, migrations.RunPython.noop, elidable=False)]
