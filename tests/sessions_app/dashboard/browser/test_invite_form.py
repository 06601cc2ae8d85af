"""B13: the invitation page showed Django's password help as a full-size bullet list between large blank gaps
(a <ul> inside a <p>, which the browser splits), and the password validators' errors under "Password
confirmation" instead of under "Password"."""

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def _invitation(page, login, live_server, chromium):
    login("ada")
    page.goto(f"{live_server.url}/settings/members/")
    page.get_by_label("Who it is for").fill("Nina")
    page.locator("#id_role").select_option("support")
    page.get_by_role("button", name="Invite").click()
    link = page.locator("#invite-link code").inner_text()
    invitee = chromium.new_context(viewport={"width": 1280, "height": 800}).new_page()
    invitee.goto(link)
    return invitee


def test_password_help_is_small_and_errors_sit_under_the_password(live_world, login, page, live_server, chromium):
    invitee = _invitation(page, login, live_server, chromium)
    try:
        help_list = invitee.locator("#id_password1_helptext ul")
        expect(help_list).to_be_visible()  # the list stays inside its help block
        body_size = float(invitee.evaluate("parseFloat(getComputedStyle(document.body).fontSize)"))
        item_size = float(help_list.locator("li").first.evaluate("e => parseFloat(getComputedStyle(e).fontSize)"))
        assert item_size < body_size
        field = invitee.get_by_label("Password", exact=True).bounding_box()
        help_box = invitee.locator("#id_password1_helptext").bounding_box()
        assert help_box["y"] - (field["y"] + field["height"]) < 24  # no large blank gap under the field
        invitee.get_by_label("Username").fill("nina")
        invitee.get_by_label("Password", exact=True).fill("short")
        invitee.get_by_label("Password confirmation").fill("short")
        invitee.get_by_role("button", name="Create account and join").click()
        errors = invitee.locator("#id_password1_errors")
        expect(errors).to_contain_text("too short")
        assert invitee.locator("#id_password2_errors").count() == 0
        # The error comes after the password and before its confirmation.
        confirmation = invitee.get_by_label("Password confirmation").bounding_box()
        assert field["y"] < errors.bounding_box()["y"] < confirmation["y"]
    finally:
        invitee.context.close()
