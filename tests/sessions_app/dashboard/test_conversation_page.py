"""One conversation: runs with verdicts, the recovered transcript with pairing, marks, permalinks and masking."""

import re

from sessions_app.models import TranscriptEntry
from sessions_app.models.audit import AuditEvent
from tests.sessions_app.dashboard.conftest import SECRET


def test_runs_are_listed_in_order_with_their_verdicts(world, as_role):
    page = as_role("support").get(f"/c/{world.deploy.external_id}/?timeline=inline").content.decode()
    runs = re.findall(r'<a class="mono" href="/r/[^"]+/" title="[^"]+">(conv-deploy-run-\d)</a>', page)
    assert runs == ["conv-deploy-run-1", "conv-deploy-run-2", "conv-deploy-run-3"]
    assert "INTERRUPTED TOOL" in page


def test_every_message_has_a_permalink_anchor(world, as_role):
    page = as_role("support").get(f"/c/{world.deploy.external_id}/").content.decode()
    positions = list(
        TranscriptEntry.objects.filter(conversation=world.deploy, summary_artifact=False).values_list(
            "position", flat=True
        )
    )
    for position in positions:
        assert f'id="m-{position}"' in page
        assert f'href="#m-{position}"' in page


def test_a_tool_call_is_shown_beside_its_result(world, as_role):
    page = as_role("support").get(f"/c/{world.deploy.external_id}/").content.decode()
    pair = re.search(
        r'<div class="toolpair">.*?lookup.*?QUOKKA-5521.*?flag checkout_v3_enabled is off.*?</div>\s*</div>', page, re.S
    )
    assert pair, "the lookup call and its result share one tool pair block"


def test_messages_recovered_from_compaction_are_marked(world, as_role):
    recovered = TranscriptEntry.objects.filter(conversation=world.deploy, recovered_from_compaction=True).count()
    assert recovered > 0
    page = as_role("support").get(f"/c/{world.deploy.external_id}/").content.decode()
    assert page.count(">recovered from compaction</span>") == recovered


def test_credentials_are_masked_and_message_text_is_escaped(world, as_role):
    page = as_role("support").get(f"/c/{world.deploy.external_id}/").content.decode()
    assert SECRET not in page
    assert "DEPLOY_TOKEN=***" in page
    assert "<b>rollback-v2.sh</b>" not in page
    assert "&lt;b&gt;rollback-v2.sh&lt;/b&gt; &amp; friends" in page


def test_support_sees_no_reveal_button_and_cannot_reveal(world, as_role):
    client = as_role("support")
    assert "Reveal masked text" not in client.get(f"/c/{world.deploy.external_id}/").content.decode()
    assert client.post(f"/c/{world.deploy.external_id}/reveal/2").status_code == 403
    assert not AuditEvent.objects.filter(event_class="credential_revealed").exists()


def _call_with_secret(world) -> int:
    """The tool call whose result holds the credential: the message that shows both side by side."""
    entry = TranscriptEntry.objects.get(conversation=world.deploy, role="tool_call", text__contains="deploy.env")
    return entry.position


def test_the_reveal_button_sits_on_the_message_that_shows_the_credential(world, as_role):
    page = as_role("admin").get(f"/c/{world.deploy.external_id}/").content.decode()
    assert re.findall(r'action="/c/conv-deploy/reveal/(\d+)"', page) == [str(_call_with_secret(world))]


def test_an_admin_reveal_shows_the_secret_once_and_writes_an_audit_event(world, as_role):
    client = as_role("admin")
    position = _call_with_secret(world)
    response = client.post(f"/c/{world.deploy.external_id}/reveal/{position}")
    assert response.status_code == 200
    assert SECRET in response.content.decode()
    event = AuditEvent.objects.get(event_class="credential_revealed")
    assert event.actor == "ada"
    assert event.conversation_id == "conv-deploy"
    assert SECRET not in str(event.__dict__)
    # A plain page view afterwards is masked again.
    assert SECRET not in client.get(f"/c/{world.deploy.external_id}/").content.decode()


def test_an_htmx_reveal_answers_with_that_message_only(world, as_role):
    position = _call_with_secret(world)
    response = as_role("admin").post(f"/c/{world.deploy.external_id}/reveal/{position}", HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert re.match(rf'<article class="msg tool_call[^"]*" id="m-{position}"', body.strip())
    assert SECRET in body
    assert "<html" not in body


def test_revealing_a_position_that_does_not_exist_is_404_and_not_audited(world, as_role):
    assert as_role("admin").post(f"/c/{world.deploy.external_id}/reveal/999").status_code == 404
    assert not AuditEvent.objects.filter(event_class="credential_revealed").exists()


def test_a_search_hit_link_highlights_its_message(world, as_role):
    page = as_role("support").get(f"/c/{world.deploy.external_id}/?at=3").content.decode()
    assert re.search(r'<article class="msg [a-z_]+ hit[ "][^>]*id="m-3"', page)


def test_long_transcripts_come_in_windows_with_links_both_ways(world, as_role, monkeypatch):
    from sessions_app.transcripts import reading as transcript_reading

    monkeypatch.setattr(transcript_reading, "WINDOW", 5)
    client = as_role("support")
    page = client.get(f"/c/{world.deploy.external_id}/?start=5").content.decode()
    assert 'id="m-5"' in page and 'id="m-9"' in page
    assert 'id="m-4"' not in page and 'id="m-10"' not in page
    assert f'href="/c/{world.deploy.external_id}/?start=0">Earlier messages' in page
    assert f'hx-get="/c/{world.deploy.external_id}/?start=10" hx-trigger="revealed"' in page


def test_a_permalink_target_opens_the_window_that_holds_it(world, as_role, monkeypatch):
    from sessions_app.transcripts import reading as transcript_reading

    monkeypatch.setattr(transcript_reading, "WINDOW", 5)
    page = as_role("support").get(f"/c/{world.deploy.external_id}/?at=7").content.decode()
    assert 'id="m-7"' in page and 'id="m-4"' not in page


def test_a_position_past_the_end_names_the_missing_message_and_shows_the_last_ones(world, as_role):
    """B11: ?at=99999 rendered only an 'Earlier messages' link."""
    last = (
        TranscriptEntry.objects.filter(conversation=world.deploy)
        .order_by("-position")
        .values_list("position", flat=True)[0]
    )
    response = as_role("support").get(f"/c/{world.deploy.external_id}/?at=99999")
    assert response.status_code == 404
    page = response.content.decode()
    assert "There is no message #99999" in page
    assert f'id="m-{last}"' in page
