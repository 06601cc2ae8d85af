"""The run's audit page shows its tool-effect ledger: a call that started and never ended after the run stopped
says "outcome unknown after crash", is an INTERRUPTED TOOL finding with its guidance (query the destination
before any retry), and is listed on the repairs page; another tenant's run is a 404."""

from sessions_app.audit.ledger import OUTCOME_UNKNOWN
from sessions_app.ingest.payloads import parse_tool_effect
from sessions_app.ingest.service import ingest_snapshots
from sessions_app.models import Run


def _ledger(world, **effect):
    run = Run.objects.filter(tenant=world.acme, conversation=world.quiet).get()
    ingest_snapshots(
        world.acme, [], source="server", via="api", tool_effects=[parse_tool_effect({"run_id": run.run_id, **effect})]
    )
    return run


def test_the_ledger_is_on_the_run_page_with_the_unfinished_call_flagged(world, as_role):
    _ledger(world, tool_call_id="call-ok", tool_name="get_weather", status="completed")
    run = _ledger(world, tool_call_id="call-charge", tool_name="charge_card", status="started")
    assert run.state == "complete"
    page = as_role("operator").get(f"/r/{run.run_id}/audit").content.decode()
    ledger = page[page.index('id="tool-effects"') : page.index("Replay requests")]
    assert "charge_card" in ledger and "call-charge" in ledger and OUTCOME_UNKNOWN in ledger
    assert ledger.count('class="effect-unknown"') == 1
    assert "get_weather" in ledger and ">completed<" in ledger
    findings = page[page.index("<h2>Findings</h2>") : page.index('id="tool-effects"')]
    assert "INTERRUPTED TOOL" in findings and OUTCOME_UNKNOWN in findings and "charge_card" in findings
    assert "Query the destination for the effect first" in findings


def test_the_unfinished_call_is_listed_on_the_repairs_page(world, as_role):
    run = _ledger(world, tool_call_id="call-charge", tool_name="charge_card", status="started")
    page = as_role("operator").get("/repairs/").content.decode()
    row = page[page.index(f'href="/r/{run.run_id}/audit"') :]
    row = row[: row.index("</tr>")]
    assert "charge_card" in row and OUTCOME_UNKNOWN in row and "Query the destination" in row


def test_a_call_that_ended_is_not_flagged(world, as_role):
    _ledger(world, tool_call_id="call-charge", tool_name="charge_card", status="started")
    run = _ledger(world, tool_call_id="call-charge", tool_name="charge_card", status="failed")
    page = as_role("operator").get(f"/r/{run.run_id}/audit").content.decode()
    assert OUTCOME_UNKNOWN not in page and "effect-unknown" not in page
    assert run.run_id not in as_role("operator").get("/repairs/").content.decode()


def test_a_run_without_a_ledger_says_so(world, as_role):
    run = Run.objects.filter(tenant=world.acme, conversation=world.quiet).get()
    page = as_role("operator").get(f"/r/{run.run_id}/audit").content.decode()
    assert "No tool-effect ledger was ingested for this run." in page


def test_another_tenant_s_run_page_is_a_404(world, as_role):
    run = _ledger(world, tool_call_id="call-charge", tool_name="charge_card", status="started")
    assert as_role("outsider").get(f"/r/{run.run_id}/audit").status_code == 404
