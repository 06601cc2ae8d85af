"""A tenant admin invites someone; the invitee opens the one-time link in their own browser, picks a username and a
password, and lands in the tenant."""

import pytest

pytestmark = pytest.mark.browser


def test_an_admin_invites_and_the_invitee_joins_once(live_world, login, page, live_server, chromium):
    login("ada")
    page.goto(f"{live_server.url}/settings/members/")
    page.get_by_label("Who it is for").fill("Nina from support")
    page.locator("#id_role").select_option("operator")
    page.get_by_role("button", name="Invite").click()
    page.wait_for_url(f"{live_server.url}/settings/members/")
    link = page.locator("#invite-link code").inner_text()
    assert "/invite/" in link
    page.reload()  # post/redirect/get: a reload shows no link and invites nobody again
    assert page.locator("#invite-link").count() == 0
    assert page.get_by_role("cell", name="Nina from support").count() == 1

    invitee = chromium.new_context().new_page()
    try:
        invitee.goto(link)
        assert invitee.url == f"{live_server.url}/invite/"  # the token left the address bar
        assert "Join Acme" in invitee.locator("main").inner_text()
        invitee.get_by_label("Username").fill("nina")
        invitee.get_by_label("Password", exact=True).fill("a-long-pass-1234")
        invitee.get_by_label("Password confirmation").fill("a-long-pass-1234")
        invitee.get_by_role("button", name="Create account and join").click()
        invitee.wait_for_url(f"{live_server.url}/conversations/")
        assert "You joined Acme as operator. Sign in as nina@acme next time." in invitee.locator("body").inner_text()
        invitee.goto(link)
        assert "not valid" in invitee.get_by_role("alert").inner_text()
    finally:
        invitee.context.close()
    page.reload()
    assert page.get_by_role("cell", name="nina@acme", exact=True).count() == 1
    assert page.console_errors == []
