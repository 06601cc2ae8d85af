"""`Snapshot.message_ids` as comma-separated text instead of jsonb (issue 24).

PostgreSQL parsed each id of a jsonb array into a numeric on every insert: a history of 1,000 ids cost 1.2 ms a row
against 0.7 ms as text, and an OTLP export of four runs writes four rows, an import a row per snapshot. The ids are
rewritten in place ("[11, 12]" becomes "11,12"): on PostgreSQL in the one statement that changes the column's type
(Citus runs it on every shard); on SQLite, whose JSON column is text with a JSON_VALID check, the table is remade
without the check and the values rewritten in one UPDATE. Either way the table is rewritten under an exclusive
lock, so writes wait for it: on a large store, migrate in a quiet hour.
"""

from django.db import migrations, models

import sessions_app.models.id_list_field

TABLE = "sessions_app_snapshot"
POSTGRESQL = f"ALTER TABLE {TABLE} ALTER COLUMN message_ids TYPE text USING translate(message_ids::text, '[] ', '')"
POSTGRESQL_BACK = f"ALTER TABLE {TABLE} ALTER COLUMN message_ids TYPE jsonb USING ('[' || message_ids || ']')::jsonb"
SQLITE = f"UPDATE {TABLE} SET message_ids = replace(replace(replace(message_ids, '[', ''), ']', ''), ' ', '')"
SQLITE_BACK = f"UPDATE {TABLE} SET message_ids = '[' || message_ids || ']'"


def id_list_field() -> sessions_app.models.id_list_field.IdListField:
    return sessions_app.models.id_list_field.IdListField(
        default=list, help_text="StoredMessage ids of the history, in order."
    )


def _remade(apps, schema_editor, to_text: bool) -> None:
    """SQLite's table remade with the column's other field (the JSON check comes and goes with JSONField)."""
    model = apps.get_model("sessions_app", "Snapshot")
    json_field = model._meta.get_field("message_ids") if to_text else models.JSONField(default=list)
    text_field = id_list_field()
    for field in (json_field, text_field):
        field.set_attributes_from_name("message_ids")
        field.model = model
    old, new = (json_field, text_field) if to_text else (text_field, json_field)
    schema_editor.alter_field(model, old, new)


def to_text(apps, schema_editor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(POSTGRESQL)
        return
    _remade(apps, schema_editor, to_text=True)
    schema_editor.execute(SQLITE)


def to_json(apps, schema_editor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(POSTGRESQL_BACK)
        return
    schema_editor.execute(SQLITE_BACK)
    _remade(apps, schema_editor, to_text=False)


class Migration(migrations.Migration):
    dependencies = [("sessions_app", "0025_snapshot_message_ids")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.AlterField(model_name="snapshot", name="message_ids", field=id_list_field())],
            database_operations=[migrations.RunPython(to_text, to_json, elidable=False)],
        )
    ]
