"""Distribute a migrated PostgreSQL database on its Citus coordinator by tenant (docs/SCALING.md, "Citus").

Citus cannot distribute a table that other tables still refer to as a local one, nor one with triggers, and it
turns a local table that refers to a reference table into a coordinator-local table (which refuses identity
columns and colocation). So, in one transaction: the foreign keys of every table concerned are dropped, the
shared tables become reference tables, the tenant-owned ones distributed tables on `tenant_id` colocated with
one anchor, their triggers come back on every shard, and the foreign keys come back as they were. Tables already
in place are left as they are, so a second run changes nothing, and a tenant-owned table a later migration adds
is distributed by the next run.
"""

from dataclasses import dataclass

from django.apps import apps
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.utils import CursorWrapper

from sessions_app.tenancy.citus_layout import CitusLayout, plan_layout


class CitusMissing(Exception):
    """The database is not a Citus coordinator."""


@dataclass(frozen=True)
class Distribution:
    made_reference: tuple[str, ...]
    made_distributed: tuple[str, ...]
    layout: CitusLayout


def has_citus(connection: BaseDatabaseWrapper) -> bool:
    if connection.vendor != "postgresql":
        return False
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'citus'")
        return cursor.fetchone() is not None


def current_layout(connection: BaseDatabaseWrapper) -> CitusLayout:
    """The layout of the database's tables as the models and the catalog declare them now."""
    tables = set(connection.introspection.table_names())
    tenant_owned = {
        model._meta.db_table
        for model in apps.get_models(include_auto_created=True)
        if any(getattr(field, "column", None) == "tenant_id" for field in model._meta.concrete_fields)
    }
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT conrelid::regclass::text, confrelid::regclass::text FROM pg_constraint
            WHERE contype = 'f' AND connamespace = current_schema()::regnamespace AND conparentid = 0"""
        )
        foreign_keys = [(table, referenced) for table, referenced in cursor.fetchall()]
    return plan_layout(tables, tenant_owned, foreign_keys)


def placed_tables(cursor: CursorWrapper) -> dict[str, str]:
    """Citus's kind of each table it knows, but partitions: 'reference', 'distributed' or 'local'."""
    cursor.execute(
        "SELECT t.table_name::text, t.citus_table_type FROM citus_tables t JOIN pg_class c ON c.oid = t.table_name "
        "WHERE NOT c.relispartition"
    )
    return dict(cursor.fetchall())


def distribute_by_tenant(connection: BaseDatabaseWrapper, shard_count: int | None = None) -> Distribution:
    if not has_citus(connection):
        raise CitusMissing(
            f"database '{connection.settings_dict['NAME']}' has no Citus extension: distribute_tenants runs on a "
            "Citus coordinator (CREATE EXTENSION citus, workers added with citus_add_node)"
        )
    layout = current_layout(connection)
    with connection.cursor() as cursor:
        # A join that does not name the tenant on both sides (an admin command across tenants, a path outside the
        # hot set the schema test checks) still answers, by repartitioning, rather than failing.
        cursor.execute("SELECT current_database()")
        (database,) = cursor.fetchone()
        cursor.execute(f'ALTER DATABASE "{database}" SET citus.enable_repartition_joins TO on')
        cursor.execute("SET citus.enable_repartition_joins TO on")
        placed = placed_tables(cursor)
        reference = tuple(t for t in layout.reference if placed.get(t) != "reference")
        distributed = tuple(t for t in layout.distributed if placed.get(t) != "distributed")
        if not reference and not distributed:
            return Distribution((), (), layout)
        concerned = [*reference, *distributed]
        cursor.execute(
            """SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint
            WHERE contype = 'f' AND conparentid = 0
            AND (conrelid::regclass::text = ANY(%s) OR confrelid::regclass::text = ANY(%s)) ORDER BY conname""",
            [concerned, concerned],
        )
        foreign_keys = cursor.fetchall()
        cursor.execute(
            "SELECT tgrelid::regclass::text, tgname, pg_get_triggerdef(oid) FROM pg_trigger "
            "WHERE NOT tgisinternal AND tgparentid = 0 AND tgrelid::regclass::text = ANY(%s) ORDER BY tgname",
            [list(distributed)],
        )
        triggers = cursor.fetchall()
        # One connection per worker for the whole transaction: Citus cannot open parallel ones after a
        # reference table was written in it.
        cursor.execute("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")
        if shard_count is not None:
            cursor.execute("SELECT set_config('citus.shard_count', %s, true)", [str(shard_count)])
        for table, name, _ in foreign_keys:
            cursor.execute(f'ALTER TABLE "{table}" DROP CONSTRAINT "{name}"')
        for table, name, _ in triggers:
            cursor.execute(f'DROP TRIGGER "{name}" ON "{table}"')
        for table in reference:
            cursor.execute("SELECT create_reference_table(%s)", [table])
        anchor = layout.colocation_anchor
        for table in distributed:
            colocate_with = "none" if table == anchor else anchor
            cursor.execute(
                "SELECT create_distributed_table(%s, 'tenant_id', colocate_with => %s)", [table, colocate_with]
            )
        # Our triggers write rows of the same tenant into tables colocated with the one they fire on, on the same
        # shard's node, which is what Citus's "unsafe" triggers leave to the schema to guarantee.
        cursor.execute("SET LOCAL citus.enable_unsafe_triggers TO on")
        for _, _, definition in triggers:
            cursor.execute(definition)
        for table, name, definition in foreign_keys:
            cursor.execute(f'ALTER TABLE "{table}" ADD CONSTRAINT "{name}" {definition}')
    return Distribution(reference, distributed, layout)
