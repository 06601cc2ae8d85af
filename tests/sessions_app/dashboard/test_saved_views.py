"""Saved views (issue 26): a filter saved under a name shows in the navigation, opens as the list with that
filter, refuses bad input changing nothing, is another tenant's 404, and fills a review queue (issue 27)."""

from sessions_app.models import ReviewItem, ReviewQueue, SavedView


def test_a_saved_view_is_in_the_navigation_and_opens_the_filtered_list(world, as_role):
    operator = as_role("operator")
    answer = operator.post("/views/new", {"name": "Weather", "query": "agent=weather_agent&cursor=x&state="})
    view = SavedView.objects.get(tenant=world.acme)
    assert answer.status_code == 302 and answer["Location"] == f"/views/{view.pk}/"
    assert view.query == "agent=weather_agent" and view.created_by == world.users["operator"]
    opened = operator.get(f"/views/{view.pk}/", follow=True)
    page = opened.content.decode()
    assert f'href="/views/{view.pk}/" data-saved-view aria-current="page">Weather<' in page
    assert "conv-quiet" in page and "conv-deploy" not in page
    support_page = as_role("support").get("/conversations/").content.decode()
    assert f'href="/views/{view.pk}/"' in support_page


def test_bad_input_is_a_form_error_and_saves_nothing(world, as_role):
    operator = as_role("operator")
    operator.post("/views/new", {"name": "Mine", "query": ""})
    for data, message in [
        ({"name": "  ", "query": ""}, "Give the view a name."),
        ({"name": "mine", "query": ""}, "already exists"),
        ({"name": "Ranges", "query": "turns_min=5&turns_max=1"}, "Turns: &#x27;from&#x27; must not be more"),
        ({"name": "Verdict", "query": "verdict=NOPE"}, "Select a valid choice"),
    ]:
        answer = operator.post("/views/new", data)
        assert answer.status_code in (400, 409), data
        assert message in answer.content.decode(), data
    assert list(SavedView.objects.values_list("name", flat=True)) == ["Mine"]


def test_another_tenants_view_is_404_and_only_admins_delete(world, as_role):
    view = SavedView.objects.create(tenant=world.acme, name="Acme only", query="state=complete")
    outsider = as_role("outsider")
    assert outsider.get(f"/views/{view.pk}/").status_code == 404
    assert outsider.post(f"/views/{view.pk}/delete").status_code == 404
    assert "Acme only" not in outsider.get("/conversations/").content.decode()
    assert as_role("operator").post(f"/views/{view.pk}/delete").status_code == 403
    assert as_role("admin").post(f"/views/{view.pk}/delete").status_code == 302
    assert not SavedView.objects.exists()


def test_a_review_queue_fills_from_a_saved_view(world, as_role):
    view = SavedView.objects.create(tenant=world.acme, name="Weather", query="agent=weather_agent")
    foreign = SavedView.objects.create(tenant=world.globex, name="Theirs", query="")
    operator = as_role("operator")
    refused = operator.post("/queues/new", {"name": "q", "view": str(foreign.pk)})
    assert refused.status_code == 400 and not ReviewQueue.objects.exists()
    answer = operator.post("/queues/new", {"name": "Weather review", "view": str(view.pk)})
    assert answer.status_code == 302
    queue = ReviewQueue.objects.get()
    assert queue.source == "/conversations/?agent=weather_agent"
    items = ReviewItem.objects.filter(queue=queue).values_list("conversation__external_id", flat=True)
    assert list(items) == ["conv-quiet"]
