"""Logging in and out with Django auth; repeated failures are refused for a while."""

from django.test import Client, override_settings

from tests.sessions_app.dashboard.conftest import PASSWORD


def test_anonymous_visitors_are_sent_to_the_login_form(world):
    response = Client().get("/conversations/")
    assert response.status_code == 302
    assert response["Location"].startswith("/login?next=/conversations/")


def test_an_expired_session_during_an_htmx_swap_redirects_the_whole_page(world):
    response = Client().get("/conversations/", HTTP_HX_REQUEST="true", HTTP_HX_CURRENT_URL="http://testserver/search/")
    assert response.status_code == 200
    assert response["HX-Redirect"] == "/login?next=/search/"


def test_a_member_logs_in_and_lands_on_the_conversations(world):
    client = Client()
    response = client.post("/login", {"username": "sam", "password": PASSWORD}, follow=True)
    assert response.redirect_chain[-1][0] == "/conversations/"
    assert b"conv-deploy" in response.content


def test_a_wrong_password_is_refused_with_a_message(world):
    response = Client().post("/login", {"username": "sam", "password": "nope"})
    assert response.status_code == 200
    assert b"Please enter a correct username and password" in response.content


def test_five_failures_block_the_username_even_with_the_right_password(world):
    client = Client()
    for _ in range(5):
        client.post("/login", {"username": "sam", "password": "wrong"})
    response = client.post("/login", {"username": "sam", "password": PASSWORD})
    assert response.status_code == 429
    assert b"Too many failed attempts" in response.content
    assert "_auth_user_id" not in client.session


def test_one_persons_failures_do_not_lock_out_another_user_behind_the_same_address(world):
    shared = Client(REMOTE_ADDR="10.0.0.5")
    for _ in range(6):
        shared.post("/login", {"username": "sam", "password": "wrong"})
    assert shared.post("/login", {"username": "sam", "password": PASSWORD}).status_code == 429
    assert Client(REMOTE_ADDR="10.0.0.5").post("/login", {"username": "olga", "password": PASSWORD}).status_code == 302


@override_settings(SESSIONDESK_LOGIN_ADDRESS_LIMIT=8)
def test_an_address_trying_many_names_reaches_its_own_ceiling(world):
    client = Client(REMOTE_ADDR="10.0.0.6")
    for n in range(8):
        client.post("/login", {"username": f"guess-{n}", "password": "wrong"})
    assert client.post("/login", {"username": "olga", "password": PASSWORD}).status_code == 429
    assert Client(REMOTE_ADDR="10.0.0.9").post("/login", {"username": "olga", "password": PASSWORD}).status_code == 302


@override_settings(SESSIONDESK_LOGIN_ADDRESS_LIMIT=3, SESSIONDESK_TRUSTED_PROXIES=["10.1.0.0/24"])
def test_the_client_address_comes_from_a_trusted_proxy_only():
    from django.test import RequestFactory

    from sessions_app.tenancy.login_lockout import client_address

    factory = RequestFactory()
    via_proxy = factory.get("/", REMOTE_ADDR="10.1.0.7", HTTP_X_FORWARDED_FOR="1.2.3.4, 198.51.100.7, 10.1.0.3")
    assert client_address(via_proxy) == "198.51.100.7"  # right-most address the trusted proxies did not add
    spoofed = factory.get("/", REMOTE_ADDR="203.0.113.9", HTTP_X_FORWARDED_FOR="198.51.100.7")
    assert client_address(spoofed) == "203.0.113.9"
    garbage = factory.get("/", REMOTE_ADDR="10.1.0.7", HTTP_X_FORWARDED_FOR="not-an-address")
    assert client_address(garbage) == "10.1.0.7"


@override_settings(SESSIONDESK_LOGIN_ADDRESS_LIMIT=4, SESSIONDESK_TRUSTED_PROXIES=["10.1.0.7"])
def test_users_behind_a_trusted_proxy_are_counted_by_their_own_address(world):
    for n in range(4):
        Client(REMOTE_ADDR="10.1.0.7", HTTP_X_FORWARDED_FOR="198.51.100.1").post(
            "/login", {"username": f"guess-{n}", "password": "wrong"}
        )
    blocked = Client(REMOTE_ADDR="10.1.0.7", HTTP_X_FORWARDED_FOR="198.51.100.1")
    assert blocked.post("/login", {"username": "olga", "password": PASSWORD}).status_code == 429
    other = Client(REMOTE_ADDR="10.1.0.7", HTTP_X_FORWARDED_FOR="198.51.100.2")
    assert other.post("/login", {"username": "olga", "password": PASSWORD}).status_code == 302


def test_logout_is_a_post_and_ends_the_session(world, as_role):
    client = as_role("support")
    assert client.get("/conversations/").status_code == 200
    client.post("/logout")
    assert client.get("/conversations/").status_code == 302


def test_a_member_changes_their_password(world, as_role):
    client = as_role("support")
    response = client.post(
        "/password/change",
        {"old_password": PASSWORD, "new_password1": "a-much-longer-pw-2", "new_password2": "a-much-longer-pw-2"},
    )
    assert response.status_code == 302
    assert Client().post("/login", {"username": "sam", "password": "a-much-longer-pw-2"}).status_code == 302


def test_a_user_without_any_membership_is_told_so(world):
    from django.contrib.auth import get_user_model

    lonely = get_user_model().objects.create_user("lonely", password=PASSWORD)
    client = Client()
    client.force_login(lonely)
    response = client.get("/conversations/")
    assert response.status_code == 403
    assert b"not a member of any tenant" in response.content
