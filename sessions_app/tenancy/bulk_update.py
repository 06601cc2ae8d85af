"""Many rows of one tenant updated in one statement without Django's per-row expressions.

`QuerySet.bulk_update` builds a CASE with one WHEN per row and field: 100 runs of 7 fields cost 100 to 200 ms of
Python (an import does that for every chunk, and again for the chunk's verdicts). On PostgreSQL the values go as
one array per field and the update joins them by primary key; elsewhere (SQLite, Citus) `bulk_update` does it.
"""

import json
from collections.abc import Mapping, Sequence

from django.db import connection
from django.db.models import F, Field, JSONField, Model

from sessions_app.tenancy.citus import has_citus

_PLAIN_POSTGRES: dict[str, bool] = {}  # by database alias: PostgreSQL without Citus


def _plain_postgres() -> bool:
    if connection.vendor != "postgresql":
        return False
    alias = connection.alias
    if alias not in _PLAIN_POSTGRES:
        _PLAIN_POSTGRES[alias] = not has_citus(connection)
    return _PLAIN_POSTGRES[alias]


def update_rows[M: Model](model: type[M], tenant_id: int, objs: Sequence[M], fields: Sequence[str]) -> None:
    """Save `fields` of `objs` (rows of `model` of tenant `tenant_id`), as `bulk_update` would."""
    if not objs:
        return
    if not _plain_postgres():
        model._default_manager.filter(tenant_id=tenant_id).bulk_update(objs, list(fields), batch_size=500)
        return
    meta = model._meta
    columns, arrays, types = [], [], []
    for name in fields:
        field = meta.get_field(name)
        if not isinstance(field, Field):
            raise TypeError(f"{name} is not a concrete field of {meta.label}")
        column = field.column
        if isinstance(field, JSONField):
            values: list[object] = [
                None if (value := getattr(obj, field.attname)) is None else json.dumps(value, cls=field.encoder)
                for obj in objs
            ]
            cast = "jsonb"
            arrays.append(values)
            types.append("text[]")
        else:
            cast = field.db_type(connection) or "text"
            arrays.append([field.get_db_prep_save(getattr(obj, field.attname), connection) for obj in objs])
            types.append(f"{cast}[]")
        columns.append((column, cast))
    names = ", ".join(f"c{index}" for index in range(len(columns)))
    assignments = ", ".join(f'"{column}" = v.c{index}::{cast}' for index, (column, cast) in enumerate(columns))
    unnested = ", ".join(f"%s::{array_type}" for array_type in types)
    sql = (
        f'UPDATE "{meta.db_table}" AS t SET {assignments} '  # noqa: S608 - the model's own table and columns, bound values
        f"FROM unnest(%s::bigint[], {unnested}) AS v(id, {names}) "
        f'WHERE t."tenant_id" = %s AND t."{meta.pk.column}" = v.id'
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [[obj.pk for obj in objs], *arrays, tenant_id])


def increment_rows[M: Model](
    model: type[M], tenant_id: int, deltas: Mapping[int, Mapping[str, int]], columns: Sequence[str]
) -> None:
    """Add `deltas` (by primary key: column: amount) to integer `columns` of rows of tenant `tenant_id`: on
    PostgreSQL one statement for all the rows, elsewhere an update per row (as `F(column) + amount`)."""
    changed = {pk: delta for pk, delta in deltas.items() if any(delta.get(column) for column in columns)}
    if not changed:
        return
    if not _plain_postgres():
        for pk, delta in changed.items():
            change = {column: F(column) + amount for column, amount in delta.items() if amount}
            model._default_manager.filter(tenant_id=tenant_id, pk=pk).update(**change)
        return
    meta = model._meta
    names = [field.column for field in (meta.get_field(column) for column in columns) if isinstance(field, Field)]
    if len(names) != len(columns):
        raise TypeError(f"{columns} are not all concrete fields of {meta.label}")
    assignments = ", ".join(f'"{name}" = t."{name}" + v.c{index}' for index, name in enumerate(names))
    unnested = ", ".join("%s::bigint[]" for _ in names)
    aliases = ", ".join(f"c{index}" for index in range(len(names)))
    sql = (
        f'UPDATE "{meta.db_table}" AS t SET {assignments} '  # noqa: S608 - the model's own table and columns, bound values
        f"FROM unnest(%s::bigint[], {unnested}) AS v(id, {aliases}) "
        f'WHERE t."tenant_id" = %s AND t."{meta.pk.column}" = v.id'
    )
    pks = list(changed)
    with connection.cursor() as cursor:
        cursor.execute(sql, [pks, *[[changed[pk].get(column, 0) for pk in pks] for column in columns], tenant_id])
