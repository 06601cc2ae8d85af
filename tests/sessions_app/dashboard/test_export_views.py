"""Admins export one conversation or a filtered set, streamed, each export audited."""

import json

from pydantic_ai.messages import ModelMessagesTypeAdapter

from sessions_app.models import TranscriptEntry
from sessions_app.models.audit import AuditEvent


def _body(response) -> bytes:
    return b"".join(response.streaming_content)


def test_one_conversation_as_json_loads_back_with_pydantic_ai(world, as_role):
    response = as_role("admin").get(f"/c/{world.deploy.external_id}/export?format=json")
    assert response.status_code == 200
    assert 'filename="conv-deploy.json"' in response["Content-Disposition"]
    messages = ModelMessagesTypeAdapter.validate_json(_body(response))
    assert len(messages) == TranscriptEntry.objects.filter(conversation=world.deploy, summary_artifact=False).count()
    event = AuditEvent.objects.get(event_class="export")
    assert (event.actor, event.conversation_id) == ("ada", "conv-deploy")


def test_jsonl_and_markdown_are_offered_and_an_unknown_format_is_refused(world, as_role):
    client = as_role("admin")
    lines = _body(client.get(f"/c/{world.deploy.external_id}/export?format=jsonl")).decode().splitlines()
    assert json.loads(lines[0])["conversation_id"] == "conv-deploy"
    markdown = _body(client.get(f"/c/{world.deploy.external_id}/export?format=markdown"))
    assert b"# Conversation conv-deploy" in markdown
    assert client.get(f"/c/{world.deploy.external_id}/export?format=xml").status_code == 400
    assert AuditEvent.objects.filter(event_class="export").count() == 2


def test_a_filtered_bulk_export_holds_exactly_the_selected_conversations(world, as_role):
    client = as_role("admin")
    page = client.get("/export/?state=interrupted").content.decode()
    assert "1 conversation selected" in page
    data = json.loads(_body(client.get("/export/download?state=interrupted&format=json")))
    assert [item["conversation_id"] for item in data] == ["conv-deploy"]
    ModelMessagesTypeAdapter.validate_python(data[0]["messages"])
    everything = json.loads(_body(client.get("/export/download?format=json")))
    assert sorted(item["conversation_id"] for item in everything) == ["conv-deploy", "conv-quiet"]


def test_operators_cannot_export(world, as_role):
    assert as_role("operator").get(f"/c/{world.deploy.external_id}/export?format=json").status_code == 403
    assert not AuditEvent.objects.filter(event_class="export").exists()


def test_a_filter_selecting_nothing_offers_no_download(world, as_role):
    """B16: '0 conversations selected.' came with three enabled Download buttons."""
    page = as_role("admin").get("/export/?agent=nobody-runs-this").content.decode()
    assert "0 conversations selected" in page
    assert "/export/download" not in page
    assert "Nothing to download" in page
