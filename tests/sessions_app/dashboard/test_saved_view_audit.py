"""Saved views are audited (issue 26): saving one and deleting one each write exactly one content-minimal event
(who, the tenant, the view by id, what was done) in the transaction of the change; a refused save or a foreign
view writes none and changes nothing."""

from sessions_app.audit.vocabulary import EventClass
from sessions_app.models import AuditEvent, SavedView


def _rows() -> tuple[int, int]:
    return SavedView.objects.count(), AuditEvent.objects.count()


def _last_event_pk() -> int:
    return AuditEvent.objects.order_by("-pk").values_list("pk", flat=True).first() or 0


def _events_since(pk: int) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(pk__gt=pk).order_by("pk"))


def test_saving_a_view_writes_one_event_naming_the_view_by_id(world, as_role):
    before = _last_event_pk()
    answer = as_role("operator").post("/views/new", {"name": "Refunds for dana", "query": "agent=weather_agent"})
    assert answer.status_code == 302
    view = SavedView.objects.get(tenant=world.acme)
    (event,) = _events_since(before)
    assert event.tenant == world.acme and event.event_class == EventClass.VIEW_SAVED
    assert event.actor == world.users["operator"].get_username()
    assert event.subject == f"saved_view:{view.pk}"
    assert "Refunds" not in str(vars(event)) and "weather_agent" not in str(vars(event))  # no name, no filter


def test_deleting_a_view_writes_one_event(world, as_role):
    view = SavedView.objects.create(tenant=world.acme, name="Complete", query="state=complete")
    before = _last_event_pk()
    assert as_role("admin").post(f"/views/{view.pk}/delete").status_code == 302
    assert not SavedView.objects.exists()
    (event,) = _events_since(before)
    assert (event.tenant, event.event_class, event.subject) == (
        world.acme,
        EventClass.VIEW_DELETED,
        f"saved_view:{view.pk}",
    )
    assert event.actor == world.users["admin"].get_username()


def test_the_events_show_in_the_tenant_s_audit_log(world, as_role):
    operator = as_role("operator")
    operator.post("/views/new", {"name": "Weather", "query": "agent=weather_agent"})
    view = SavedView.objects.get()
    as_role("admin").post(f"/views/{view.pk}/delete")
    page = as_role("admin").get("/audit/").content.decode()
    assert page.count(f"saved_view:{view.pk}") == 2
    assert "Saved view created" in page and "Saved view deleted" in page
    assert f"saved_view:{view.pk}" not in as_role("outsider").get("/audit/").content.decode()


def test_a_refused_save_writes_no_event_and_stores_nothing(world, as_role):
    operator = as_role("operator")
    operator.post("/views/new", {"name": "Mine", "query": ""})
    before = _rows()
    for data in [
        {"name": "  ", "query": ""},
        {"name": "x" * 81, "query": ""},
        {"name": "MINE", "query": "state=complete"},  # taken, whatever the case
        {"name": "Ranges", "query": "turns_min=5&turns_max=1"},
        {"name": "Verdict", "query": "verdict=NOPE"},
    ]:
        assert operator.post("/views/new", data).status_code in (400, 409), data
        assert _rows() == before, data


def test_another_tenant_s_view_is_404_and_writes_nothing(world, as_role):
    view = SavedView.objects.create(tenant=world.acme, name="Acme only", query="state=complete")
    before = _rows()
    outsider = as_role("outsider")  # an admin of globex
    assert outsider.post(f"/views/{view.pk}/delete").status_code == 404
    assert outsider.get(f"/views/{view.pk}/").status_code == 404
    assert _rows() == before
    assert SavedView.objects.get().tenant == world.acme
