"""Operators see repairs across the tenant, the audit event log (filtered, paged, CSV) and one run's audit."""

import csv
import io
import re

from sessions_app.audit import evidence
from sessions_app.audit import listing as audit_listing
from sessions_app.models import Run, TranscriptEntry
from sessions_app.models.audit import AuditEvent


def test_the_repairs_page_lists_the_interrupted_call_with_a_hashed_id_and_guidance(world, as_role):
    page = as_role("operator").get("/repairs/").content.decode()
    assert "conv-deploy-run-3" in page
    assert "INTERRUPTED TOOL" in page
    assert "deploy" in page
    assert "not a retry order" in page
    assert "conv-globex" not in page


def test_a_repair_links_to_its_run_audit(world, as_role):
    run = Run.objects.get(tenant=world.acme, run_id="conv-deploy-run-3")
    page = as_role("operator").get("/repairs/").content.decode()
    assert f'href="/r/{run.run_id}/audit"' in page
    audit = as_role("operator").get(f"/r/{run.run_id}/audit").content.decode()
    assert "INTERRUPTED TOOL" in audit and "Next:" in audit


def test_events_are_filtered_by_class_and_run(world, as_role):
    client = as_role("operator")
    page = client.get("/audit/?event_class=interrupted_synthesized").content.decode()
    runs = set(re.findall(r"\?run_id=([^\"]+)\"", page))
    assert runs == {"conv-deploy-run-3"}
    page = client.get("/audit/?run_id=conv-deploy-run-1").content.decode()
    assert set(re.findall(r"\?run_id=([^\"]+)\"", page)) == {"conv-deploy-run-1"}


def test_an_unknown_class_is_a_form_error(world, as_role):
    assert as_role("operator").get("/audit/?event_class=nope").status_code == 400


def test_events_page_with_a_cursor_and_never_repeat(world, as_role, monkeypatch):
    monkeypatch.setattr(audit_listing, "PAGE_SIZE", 2)
    client = as_role("operator")
    seen: list[str] = []
    url = "/audit/"
    while url:
        page = client.get(url).content.decode()
        seen += re.findall(r'<time datetime="[^"]+">', page)
        link = re.search(r'<a href="(/audit/\?[^"]*cursor=\d+)">Next page</a>', page)
        url = link.group(1).replace("&amp;", "&") if link else None
    assert len(seen) == AuditEvent.objects.filter(tenant=world.acme).count() > 2


def test_the_csv_holds_every_matching_event_and_no_content(world, as_role):
    response = as_role("operator").get("/audit.csv")
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0] == list(audit_listing.CSV_COLUMNS)
    assert len(rows) - 1 == AuditEvent.objects.filter(tenant=world.acme).count()
    assert not any("QUOKKA" in cell or "sk-live" in cell for row in rows for cell in row)


def test_csv_cells_that_look_like_formulas_are_neutralised():
    assert audit_listing._csv_safe("=HYPERLINK(1)") == "'=HYPERLINK(1)"
    assert audit_listing._csv_safe("plain") == "plain"


def test_the_run_audit_shows_the_principal_truncated_and_the_replay_requests(world, as_role, client):
    from sessions_app.audit.principals import claim_conversation, principal_hash
    from sessions_app.tenancy.api_keys import create_api_key

    run = Run.objects.select_related("conversation").get(tenant=world.acme, run_id="conv-deploy-run-3")
    owner = principal_hash(world.acme.id, "user:dana")
    claim_conversation(run.conversation, owner)
    _, key = create_api_key(world.acme, "server")
    conversation_id = run.conversation.external_id
    client.get(
        f"/api/v1/conversations/{conversation_id}/replay?principal=user:mallory", HTTP_AUTHORIZATION=f"Bearer {key}"
    )
    page = as_role("operator").get(f"/r/{run.run_id}/audit").content.decode()
    assert owner[:12] + "…" in page and owner not in page and "dana" not in page
    assert "Replay requests for this conversation" in page
    assert "refused" in page and principal_hash(world.acme.id, "user:mallory")[:12] in page


def test_an_operator_resolves_a_wait_on_the_audit_page_with_its_token(world, as_role):
    from sessions_app.models.audit import RunVerdict, Wait
    from tests.rowcounts import row_counts

    run = Run.objects.get(tenant=world.acme, run_id="conv-deploy-run-1")
    token = "operator-resume-token-0123456789"
    evidence.add_wait(
        world.acme,
        {
            "run_id": run.run_id,
            "owner": "finance",
            "decision": "approve",
            "deadline": "2999-01-01T09:00:00+00:00",
            "resume_token": token,
        },
    )
    operator = as_role("operator")
    page = operator.get(f"/r/{run.run_id}/audit").content.decode()
    assert "Waiting for <strong>finance</strong>" in page and "Resolve wait" in page
    before = row_counts()
    wrong = operator.post(f"/r/{run.run_id}/waits/resolve", {"resume_token": "wrong-token-0123456789"})
    assert wrong.status_code == 400 and "does not match an open wait" in wrong.content.decode()
    assert row_counts() == before
    assert as_role("support").post(f"/r/{run.run_id}/waits/resolve", {"resume_token": token}).status_code == 403
    response = operator.post(f"/r/{run.run_id}/waits/resolve", {"resume_token": token})
    assert response.status_code == 302 and response["Location"] == f"/r/{run.run_id}/audit"
    wait = Wait.objects.get(run=run)
    assert wait.resolved_at is not None and wait.resolved_by == world.users["operator"].get_username()
    assert RunVerdict.objects.get(run=run).verdict != "WAITING"
    assert AuditEvent.objects.filter(event_class="wait_resolved", run_id=run.run_id).count() == 1


def test_a_repair_links_to_the_snapshot_it_concerns_and_to_its_place_in_the_transcript(world, as_role):
    client = as_role("operator")
    page = client.get("/repairs/").content.decode()
    snapshot = re.search(
        r'<a class="repair-snapshot" href="(/r/conv-deploy-run-3/snapshots/\d+/diff)">snapshot #', page
    )
    assert snapshot and client.get(snapshot.group(1)).status_code == 200
    # The interrupted deploy call of run 3 is in its latest snapshot, not in the recovered transcript (recovery
    # keeps complete snapshots only): the row links to its mark, shown in place after the run's last message.
    message = re.search(r'<a class="repair-message" href="(/c/conv-deploy/\?at=(\d+)#(interrupted-[0-9a-f]+))">', page)
    assert message
    last = (
        TranscriptEntry.objects.filter(
            conversation=world.deploy, run__run_id="conv-deploy-run-3", summary_artifact=False
        )
        .order_by("-position")
        .values_list("position", flat=True)
        .first()
    )
    if last is None:
        last = world.deploy.entries.filter(summary_artifact=False).order_by("-position").first().position
    assert int(message.group(2)) == last
    conversation = client.get(message.group(1)).content.decode()
    mark = re.search(
        rf'<article[^>]* id="m-{last}".*?</article>\s*<aside class="msg repair-mark" id="{message.group(3)}"',
        conversation,
        re.S,
    )
    assert mark, "the mark follows the message it comes after"
    # A call that is in the transcript maps to the message holding it, from the stored facts.
    from sessions_app.audit.digests import hash_tool_call_id
    from sessions_app.audit.repair_places import repair_places

    run = Run.objects.get(tenant=world.acme, run_id="conv-deploy-run-1")
    call = hash_tool_call_id("conv-deploy-run-1-c2")
    place = repair_places(world.acme, [(run.pk, call)])[(run.pk, call)]
    assert (place.position, place.anchor, place.in_transcript) == (3, "m-3", True)  # the call, before its result


def test_each_finding_of_a_run_audit_links_to_its_place_or_the_snapshot_judged(world, as_role):
    client = as_role("operator")
    page = client.get("/r/conv-deploy-run-3/audit").content.decode()
    assert re.search(r'<a class="finding-message" href="/c/conv-deploy/\?at=\d+#interrupted-[0-9a-f]+">In place', page)
    snapshots = re.findall(r'<a class="finding-snapshot" href="(/r/conv-deploy-run-3/snapshots/\d+/diff)">', page)
    assert len(snapshots) == page.count('<div class="panel">\n  <p><span class="badge bad">')
    assert client.get(snapshots[0]).status_code == 200


def test_events_are_narrowed_by_an_inclusive_until_date(world, as_role):
    client = as_role("operator")
    observed = AuditEvent.objects.filter(tenant=world.acme).order_by("observed_at").first().observed_at
    day = observed.date().isoformat()
    same_day = client.get(f"/audit/?since={day}&until={day}").content.decode()
    assert "No audit events match." not in same_day
    before = client.get("/audit/?until=2000-01-01").content.decode()
    assert "No audit events match." in before


def test_bad_or_reversed_dates_are_a_form_error_naming_the_field(world, as_role):
    client = as_role("operator")
    response = client.get("/audit/?until=2024-13-45")
    assert response.status_code == 400
    assert "Until: Enter a valid date." in response.content.decode()
    response = client.get("/audit/?since=2025-02-01&until=2025-01-01")
    assert response.status_code == 400
    assert "&#x27;From&#x27; must not be after &#x27;Until&#x27;." in response.content.decode()
    assert as_role("operator").get("/audit.csv?until=nope").status_code == 400


def test_an_event_recording_a_repair_links_to_its_place_and_snapshot(world, as_role):
    client = as_role("operator")
    page = client.get("/audit/?event_class=interrupted_synthesized").content.decode()
    link = re.search(
        r'<a class="event-message" href="(/c/conv-deploy/\?at=\d+#interrupted-[0-9a-f]+)">in place</a>', page
    )
    assert link
    assert re.search(r'<a class="event-snapshot" href="/r/conv-deploy-run-3/snapshots/\d+/diff">snapshot #', page)
    anchor = link.group(1).split("#")[1]
    assert f'id="{anchor}"' in client.get(link.group(1).replace("&amp;", "&")).content.decode()
