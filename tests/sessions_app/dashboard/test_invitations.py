"""Tenant admins invite people with a one-time link; the invitee picks a username or signs in to an account they
have. The admin names nobody, so nothing about accounts outside the tenant can be learned or pulled in."""

import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.test import Client
from django.utils import timezone

from sessions_app.models import Invitation, Membership
from sessions_app.models.audit import AuditEvent
from sessions_app.tenancy import administration as tenant_admin
from tests.factories import make_member, make_tenant
from tests.rowcounts import row_counts

PASSWORD = "a-long-pass-1234"


def invite(client: Client, role: str = "support", note: str = "") -> str:
    posted = client.post("/settings/members/", {"role": role, "note": note})
    assert posted.status_code == 302  # post/redirect/get
    page = client.get(posted["Location"])
    assert "no-store" in page["Cache-Control"]
    return re.search(r'<code class="mono">http://testserver(/invite/[^<]+)</code>', page.content.decode()).group(1)


def test_an_invitee_picks_a_username_and_joins_with_the_role(world, as_role):
    admin = as_role("admin")
    link = invite(admin, "operator", note="Nina from support")
    assert b"/invite/" not in admin.get("/settings/members/").content  # shown once; a reload invites nobody
    assert Invitation.objects.filter(tenant=world.acme).count() == 1
    assert b"Nina from support" in admin.get("/settings/members/").content  # listed as open until accepted

    invitee = Client()
    opened = invitee.get(link)
    assert opened.status_code == 302 and opened["Location"] == "/invite/"  # the token leaves the address bar
    form = invitee.get("/invite/")
    assert b"Join Acme" in form.content and b"operator" in form.content
    done = invitee.post("/invite/", {"username": "nina", "password1": PASSWORD, "password2": PASSWORD})
    assert done.status_code == 302 and done["Location"] == "/conversations/"
    assert invitee.get("/conversations/").status_code == 200
    assert Membership.objects.get(tenant=world.acme, user__username="nina@acme").role == "operator"
    assert Client().get(link).status_code == 404  # one time only
    assert AuditEvent.objects.filter(tenant=world.acme, event_class="member_changed").count() == 2


def test_the_admin_form_names_nobody_so_other_tenants_users_cannot_be_told_apart(world, as_role):
    """Whatever an admin types, the answer is a link; names of other tenants' users change nothing."""
    admin = as_role("admin")
    before = Membership.objects.filter(user__username="gus").count()
    for name in ("gus", "nobody-at-all"):
        response = admin.post("/settings/members/", {"username": name, "role": "support"})
        assert response.status_code == 302
        assert name.encode() not in admin.get(response["Location"]).content
    assert Membership.objects.filter(user__username="gus").count() == before
    assert not get_user_model().objects.filter(username="nobody-at-all").exists()


def test_someone_with_an_account_elsewhere_joins_by_signing_in(world, as_role):
    link = invite(as_role("admin"), "support")
    gus = Client()
    gus.get(link)
    login = gus.get("/invite/")
    assert b"Sign in" in login.content
    gus.force_login(world.users["outsider"])  # signing in keeps the session, and with it the invitation
    joined = gus.post("/invite/")
    assert joined.status_code == 302
    assert Membership.objects.filter(tenant=world.acme, user__username="gus", role="support").exists()
    assert Membership.objects.filter(tenant=world.globex, user__username="gus", role="admin").exists()


def test_an_invitation_never_lowers_the_role_of_a_member(world, as_role):
    link = invite(as_role("admin"), "support")
    olga = as_role("operator")
    olga.get(link)
    olga.post("/invite/")
    assert Membership.objects.get(tenant=world.acme, user__username="olga").role == "operator"


def test_a_bad_signup_changes_nothing_and_keeps_the_link_usable(world, as_role):
    link = invite(as_role("admin"))
    invitee = Client()
    invitee.get(link)
    before = (row_counts(), get_user_model().objects.count())
    mismatch = invitee.post("/invite/", {"username": "nina", "password1": PASSWORD, "password2": "other"})
    assert mismatch.status_code == 400
    at_sign = invitee.post("/invite/", {"username": "nina@globex", "password1": PASSWORD, "password2": PASSWORD})
    assert at_sign.status_code == 400 and b"without &#x27;@&#x27;" in at_sign.content
    assert (row_counts(), get_user_model().objects.count()) == before
    accepted = invitee.post("/invite/", {"username": "nina", "password1": PASSWORD, "password2": PASSWORD})
    assert accepted.status_code == 302


def _sign_up(world, as_role, name: str):
    invitee = Client()
    invitee.get(invite(as_role("admin")))
    return invitee.post("/invite/", {"username": name, "password1": PASSWORD, "password2": PASSWORD})


def test_the_signup_answers_the_same_for_a_name_taken_in_another_tenant_and_a_free_one(world, as_role):
    """Usernames are global: "gus" exists (globex's admin), "nobody-yet" does not. Each sign-up joins, as a name
    scoped to acme, and the answers differ only by the name picked; gus's account is untouched."""
    gus_before = get_user_model().objects.filter(username="gus").values().get()
    taken, free = _sign_up(world, as_role, "gus"), _sign_up(world, as_role, "nobody-yet")
    assert taken.status_code == free.status_code == 302 and taken["Location"] == free["Location"]
    assert Membership.objects.get(tenant=world.acme, user__username="gus@acme").role == "support"
    assert Membership.objects.get(tenant=world.acme, user__username="nobody-yet@acme").role == "support"
    assert not Membership.objects.filter(tenant=world.acme, user__username="gus").exists()
    assert get_user_model().objects.filter(username="gus").values().get() == gus_before
    assert get_user_model().objects.filter(username__in=["gus", "gus@acme"]).count() == 2


def test_a_name_taken_in_the_same_tenant_is_refused_naming_no_account(world, as_role):
    assert _sign_up(world, as_role, "nina").status_code == 302
    again = _sign_up(world, as_role, "nina")
    assert again.status_code == 400 and b"cannot be used" in again.content and b"nina@acme" not in again.content


def test_withdrawn_expired_and_unknown_links_get_one_answer(world, as_role):
    admin = as_role("admin")
    withdrawn = invite(admin)
    invitation = Invitation.objects.get(tenant=world.acme)
    admin.post(f"/settings/invitations/{invitation.pk}/withdraw")
    expired = invite(admin)
    Invitation.objects.filter(revoked_at=None).update(expires_at=timezone.now() - timedelta(seconds=1))
    answers = [Client().get(link) for link in (withdrawn, expired, "/invite/not-a-token/")]
    assert {answer.status_code for answer in answers} == {404}
    main = [re.search(r"<main.*</main>", answer.content.decode(), re.S).group(0) for answer in answers]
    assert len(set(main)) == 1 and "not valid" in main[0]


def test_withdrawing_a_spent_link_changes_nothing_and_says_so(world, as_role):
    admin = as_role("admin")
    invite(admin)
    invitation = Invitation.objects.get(tenant=world.acme)
    admin.post(f"/settings/invitations/{invitation.pk}/withdraw")
    before = row_counts()
    again = admin.post(f"/settings/invitations/{invitation.pk}/withdraw", follow=True)
    assert "already accepted or withdrawn; nothing changed" in again.content.decode()
    assert row_counts() == before  # no second audit event


def test_another_tenants_admin_cannot_withdraw_an_invitation(world, as_role):
    invite(as_role("admin"))
    invitation = Invitation.objects.get(tenant=world.acme)
    gus = Client()
    gus.force_login(world.users["outsider"])
    assert gus.post(f"/settings/invitations/{invitation.pk}/withdraw").status_code == 404
    invitation.refresh_from_db()
    assert invitation.revoked_at is None


@pytest.fixture
def open_link(transactional_db):
    """A tenant, its admin and the raw token of a support invitation the admin made, committed for other threads."""
    tenant = make_tenant()
    admin = make_member(tenant, "admin")
    _, raw = tenant_admin.create_invitation(tenant, "support", actor=admin)
    return tenant, admin, raw


@pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrent acceptances need PostgreSQL's locks")
def test_one_link_accepted_twice_at_once_makes_one_member(open_link):
    tenant, _, raw = open_link
    people = [make_member(make_tenant(), "admin") for _ in range(4)]
    start = threading.Barrier(len(people))

    def accept(user) -> str:
        start.wait()
        try:
            tenant_admin.accept_invitation(raw, user)
            return "joined"
        except tenant_admin.InvitationUnusable:
            return "refused"
        finally:
            connection.close()

    with ThreadPoolExecutor(len(people)) as pool:
        outcomes = sorted(pool.map(accept, people))
    assert outcomes == ["joined", "refused", "refused", "refused"]
    assert Membership.objects.filter(tenant=tenant).count() == 2  # the admin and the one who joined


@pytest.mark.skipif(connection.vendor != "postgresql", reason="a withdrawal racing an acceptance needs two writers")
def test_a_withdrawal_racing_an_acceptance_waits_and_leaves_the_spent_link_accepted(open_link):
    tenant, admin, raw = open_link
    invitation = Invitation.objects.get(tenant=tenant)  # what the withdraw page loaded: still open
    joiner = make_member(make_tenant(), "admin")
    accepted, let_go = threading.Event(), threading.Event()

    def accept_and_hold() -> None:
        try:
            with transaction.atomic():
                tenant_admin.accept_invitation(raw, joiner)
                accepted.set()
                assert let_go.wait(60)
        finally:
            connection.close()

    def withdraw() -> bool:
        try:
            return tenant_admin.withdraw_invitation(invitation, actor=admin)
        finally:
            connection.close()

    with ThreadPoolExecutor(2) as pool:
        holder = pool.submit(accept_and_hold)
        assert accepted.wait(60)
        withdrawal = pool.submit(withdraw)
        time.sleep(0.5)
        waited = not withdrawal.done()  # the acceptance holds the tenant's MEMBERS lock
        let_go.set()
        holder.result(60)
        withdrawn = withdrawal.result(60)
    assert waited and withdrawn is False
    invitation.refresh_from_db()
    assert invitation.accepted_at is not None and invitation.revoked_at is None
    assert Membership.objects.filter(tenant=tenant, user=joiner).exists()
