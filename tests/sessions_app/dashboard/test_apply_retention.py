"""`manage.py apply_retention` deletes each tenant's expired conversations, rows and index entries together."""

import io

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from sessions_app.models import Conversation, StoredMessage, TranscriptEntry
from sessions_app.transcripts.retention import cutoff


def _age(conversation, when="2020-01-01T00:00:00Z"):
    # last_activity_at is the last activity (the agents' scripted clock says January 2026): make every other
    # conversation fresh so only the aged one is past the retention period.
    Conversation.objects.exclude(pk=conversation.pk).update(last_activity_at=timezone.now())
    Conversation.objects.filter(pk=conversation.pk).update(last_activity_at=when)


def _run(*args) -> str:
    out = io.StringIO()
    call_command("apply_retention", *args, stdout=out)
    return out.getvalue()


def test_only_conversations_past_their_tenants_retention_are_deleted(world):
    _age(world.quiet)
    Conversation.objects.filter(pk=world.foreign.pk).update(last_activity_at="2020-01-01T00:00:00Z")  # globex: none
    world.acme.retention_days = 90
    world.acme.save()
    output = _run()
    assert "acme: deleted 1 conversation(s)" in output
    assert set(Conversation.objects.values_list("external_id", flat=True)) == {"conv-deploy", "conv-globex"}
    assert not TranscriptEntry.objects.filter(conversation_id=world.quiet.pk).exists()


def test_a_dry_run_counts_and_deletes_nothing(world):
    _age(world.quiet)
    world.acme.retention_days = 90
    world.acme.save()
    before = (Conversation.objects.count(), TranscriptEntry.objects.count(), StoredMessage.objects.count())
    assert "would delete 1" in _run("--dry-run")
    assert (Conversation.objects.count(), TranscriptEntry.objects.count(), StoredMessage.objects.count()) == before


def test_deleted_conversations_leave_search(world, as_role):
    _age(world.quiet)
    world.acme.retention_days = 90
    world.acme.save()
    _run("--tenant", "acme")
    assert "Nothing found:" in as_role("support").get("/search/?q=Krak%C3%B3w").content.decode()


def test_an_unknown_tenant_is_a_clear_error(world):
    with pytest.raises(CommandError, match="No tenant with slug 'nope'"):
        _run("--tenant", "nope")


def test_the_cutoff_is_now_minus_the_period_and_none_keeps_everything():
    from datetime import UTC, datetime

    now = datetime(2026, 3, 31, tzinfo=UTC)
    assert cutoff(now, 30) == datetime(2026, 3, 1, tzinfo=UTC)
    assert cutoff(now, None) is None
