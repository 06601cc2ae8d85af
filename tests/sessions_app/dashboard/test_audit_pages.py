"""Operators see repairs across the tenant, the audit event log (filtered, paged, CSV) and one run's audit."""

import csv
import io
import re

from sessions_app.audit import listing as audit_listing
from sessions_app.models import Run
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
    assert f'href="/runs/{run.pk}/audit"' in page
    audit = as_role("operator").get(f"/runs/{run.pk}/audit").content.decode()
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
