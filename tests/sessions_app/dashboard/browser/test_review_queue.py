"""A reviewer works through a review queue of five conversations in Chromium: takes the next item, scores it,
comments, marks it done and is given the next; then filters the conversation list by the score."""

import pytest
from playwright.sync_api import expect

from sessions_app.dashboard.filter_urls import conversations_for
from sessions_app.models import AuditEvent, Comment, ItemState, ReviewItem, Score
from sessions_app.review import queues, scores
from sessions_app.review.score_values import ScoreKind, ScoreShape
from tests.sessions_app.dashboard.conftest import ingest_plan, quiet_plan

pytestmark = pytest.mark.browser


@pytest.fixture
def queue_of_five(live_world):
    for n in range(3, 6):
        ingest_plan(live_world.acme, quiet_plan(), f"conv-quiet-{n}")
    scores.define_score(live_world.acme, ScoreShape("helpfulness", ScoreKind.NUMERIC, 1, 5), actor="ada")
    queue = queues.create_queue(
        live_world.acme, "this week", "/conversations/", actor=live_world.users["operator"], select=conversations_for
    )
    assert queue.items.count() == 5
    return queue


def test_a_reviewer_scores_comments_and_finishes_five_items_then_filters_by_score(
    queue_of_five, login, page, live_server
):
    login("sam")
    page.get_by_role("link", name="Queues").click()
    page.get_by_role("link", name="this week").click()
    expect(page.get_by_text("0 of 5 done")).to_be_visible()
    page.get_by_role("button", name="Take the next item").click()
    for value in range(1, 6):
        page.wait_for_url("**/c/**?review_item=*")
        score_form = page.get_by_role("form", name="Set a score")
        score_form.get_by_label("Score").select_option("helpfulness")
        score_form.get_by_label("Value").fill(str(value))
        score_form.get_by_role("button", name="Save score").click()
        expect(page.get_by_text("Score saved.")).to_be_visible()
        comment_form = page.get_by_role("form", name="Add a comment")
        comment_form.get_by_role("textbox", name="Comment").fill(f"Reviewed **item {value}** <script>x()</script>")
        comment_form.get_by_role("button", name="Add comment").click()
        expect(page.get_by_text("Comment added.")).to_be_visible()
        expect(page.locator(".comment-body strong", has_text=f"item {value}")).to_be_visible()
        page.get_by_role("button", name="Mark done and take the next").click()
    page.wait_for_url(f"{live_server.url}/queues/{queue_of_five.pk}/")
    expect(page.get_by_text("Nothing left to review in this queue.")).to_be_visible()
    expect(page.get_by_text("5 of 5 done")).to_be_visible()
    expect(page.get_by_text("sam (5)")).to_be_visible()
    assert ReviewItem.objects.filter(state=ItemState.DONE, reviewer__username="sam").count() == 5
    assert sorted(Score.objects.values_list("number", flat=True)) == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert Comment.objects.count() == 5
    assert AuditEvent.objects.filter(event_class="review_item_changed", actor="sam").count() == 10

    page.get_by_role("link", name="Conversations").click()
    page.get_by_role("searchbox").first.fill("score:helpfulness>=4")
    page.keyboard.press("Enter")
    rows = page.locator("td.conversation-id")
    expect(rows).to_have_count(2)
    high = set(Score.objects.filter(number__gte=4).values_list("conversation__external_id", flat=True))
    assert {text.strip() for text in rows.locator("a").all_inner_texts()} == high
    assert page.console_errors == []
