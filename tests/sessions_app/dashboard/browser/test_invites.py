"""A tenant admin invites someone; the invited person sets a password with the one-time link in their own browser."""

import pytest

pytestmark = pytest.mark.browser


def test_an_admin_invites_and_the_invitee_sets_a_password_once(live_world, login, page, live_server, chromium):
    login("ada")
    page.goto(f"{live_server.url}/settings/members/")
    page.get_by_label("Username for the new account").fill("nina")
    page.locator("#id_role").select_option("operator")
    page.get_by_role("button", name="Invite").click()
    page.wait_for_url(f"{live_server.url}/settings/members/")
    link = page.locator("#invite-link code").inner_text()
    assert "/invite/" in link
    page.reload()  # post/redirect/get: a reload shows no link and invites nobody again
    assert page.locator("#invite-link").count() == 0
    assert page.get_by_role("cell", name="nina").count() == 1

    invitee = chromium.new_context().new_page()
    try:
        invitee.goto(link)
        assert "nina" in invitee.locator("main").inner_text()
        assert "/invite/" in invitee.url and link not in invitee.url  # the token left the address bar
        invitee.get_by_label("New password", exact=True).fill("a-long-pass-1234")
        invitee.get_by_label("New password confirmation").fill("a-long-pass-1234")
        invitee.get_by_role("button", name="Set password").click()
        invitee.wait_for_url(f"{live_server.url}/conversations/")
        invitee.goto(link)
        assert "not valid" in invitee.get_by_role("alert").inner_text()
    finally:
        invitee.context.close()
    assert page.console_errors == []
