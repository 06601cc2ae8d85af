"""Approvals pending (issue 28): a pending call's decision is now stored on its span when the answering run
arrives, and no longer found by scanning the conversation's later transcripts on every read. This backfills the
decisions of calls already answered, with that scan, once."""

import json
from typing import Any

from django.db import migrations


def _decision(message: Any, tool_call_id: str, ran: bool | None) -> str:
    """As `sessions_app.transcripts.runtime_spans._decision` was when this migration was written."""
    for part in message.get("parts") or () if isinstance(message, dict) else ():
        if isinstance(part, dict) and part.get("tool_call_id") == tool_call_id:
            if part.get("part_kind") == "retry-prompt" or part.get("outcome") == "denied":
                return "denied"
            if part.get("part_kind") == "tool-return":
                return "denied" if ran is False else "approved"
    return ""


def backfill(apps: Any, schema_editor: Any) -> None:
    runtime_span = apps.get_model("sessions_app", "RuntimeSpan")
    entry = apps.get_model("sessions_app", "TranscriptEntry")
    effect = apps.get_model("sessions_app", "ToolEffect")
    snapshot = apps.get_model("sessions_app", "Snapshot")
    by_run: dict[int, list[Any]] = {}
    for span in (
        runtime_span.objects.filter(kind="approval_pending")
        .exclude(facts__has_key="state")
        .select_related("run")
        .order_by("started_at", "pk")
        .iterator()
    ):
        if isinstance(span.facts, dict) and span.facts.get("tool_call_id"):
            by_run.setdefault(span.run_id, []).append(span)
    for spans in by_run.values():
        run = spans[0].run
        calls = {str(span.facts["tool_call_id"]): span for span in spans}
        answers = (
            entry.objects.filter(
                tenant_id=run.tenant_id,
                conversation_id=run.conversation_id,
                role="tool_result",
                run__started_at__gte=run.started_at,
            )
            .exclude(run_id=run.pk)
            .order_by("position")
            .values_list("facts", "run_id", "run__run_id", "timestamp", "message__data")
        )
        found = [
            (call_id, run_pk, run_id, timestamp, data)
            for facts, run_pk, run_id, timestamp, data in answers
            for call_id in sorted(
                ({str(p.get("tool_call_id")) for p in facts.get("parts", ())} if isinstance(facts, dict) else set())
                & calls.keys()
            )
        ]
        runs = {f[1] for f in found}
        ledgers: dict[int, set[str]] = {}
        for run_pk, call_id in effect.objects.filter(tenant_id=run.tenant_id, run_id__in=runs).values_list(
            "run_id", "tool_call_id"
        ):
            ledgers.setdefault(run_pk, set()).add(call_id)
        traced = set(
            snapshot.objects.filter(tenant_id=run.tenant_id, run_id__in=runs, via="otlp").values_list(
                "run_id", flat=True
            )
        )
        decided = []
        for call_id, run_pk, run_id, timestamp, data in found:
            span = calls[call_id]
            ran = call_id in ledgers.get(run_pk, set()) if run_pk in ledgers or run_pk in traced else None
            if "state" not in span.facts and (state := _decision(json.loads(data), call_id, ran)):
                span.facts = {
                    **span.facts,
                    "state": state,
                    "decided_in_run": run_id,
                    "decided_at": timestamp.isoformat() if timestamp else None,
                }
                decided.append(span)
        runtime_span.objects.bulk_update(decided, ["facts"])


class Migration(migrations.Migration):
    dependencies = [("sessions_app", "0021_pending_spans")]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
