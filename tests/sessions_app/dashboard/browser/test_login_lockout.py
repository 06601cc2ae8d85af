"""Login protection under real concurrent attempts: Chromium sends twelve wrong passwords at once to the live server."""

import pytest

from sessions_app.models import LoginGate
from tests.sessions_app.dashboard.conftest import PASSWORD

pytestmark = pytest.mark.browser

_SEND_AT_ONCE = """async ([username, password, count]) => {
  const token = document.querySelector('input[name=csrfmiddlewaretoken]').value;
  const attempt = () => {
    const body = new URLSearchParams({csrfmiddlewaretoken: token, username, password, next: ''});
    return fetch('/login', {method: 'POST', body, redirect: 'manual'}).then(r => r.status);
  };
  return Promise.all(Array.from({length: count}, attempt));
}"""


def test_concurrent_wrong_passwords_get_at_most_the_limit_of_checks(live_world, page, live_server):
    from axes.models import AccessAttempt

    page.goto(f"{live_server.url}/login")
    statuses = page.evaluate(_SEND_AT_ONCE, ["sam", "wrong", 12])
    assert len(statuses) == 12
    checked = sum(AccessAttempt.objects.filter(username="sam").values_list("failures_since_start", flat=True))
    assert checked == 5  # every password check was counted, and no more than the limit were made
    assert statuses.count(429) >= 7
    assert LoginGate.objects.count() == 1  # a digest per username, never the name
    # The right password is now refused too, in the form as well.
    assert page.evaluate(_SEND_AT_ONCE, ["sam", PASSWORD, 1]) == [429]
    page.goto(f"{live_server.url}/login")
    page.get_by_label("Username").fill("sam")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    assert page.get_by_role("alert").inner_text().startswith("Too many failed attempts")
    # Another user behind the same address still logs in (a manual redirect is opaque to fetch: status 0).
    assert page.evaluate(_SEND_AT_ONCE, ["olga", PASSWORD, 1]) in ([302], [0])
    page.goto(f"{live_server.url}/login")
    page.wait_for_url(f"{live_server.url}/conversations/")
