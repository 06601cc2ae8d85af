"""manage.py distribute_tenants: refuses without Citus and changes nothing; on Citus a second run changes nothing
and says so; the layout it plans puts any table with a tenant_id on the shards (a new model too)."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from sessions_app.tenancy.citus_layout import plan_layout
from tests.citus_mode import CITUS_TESTS


def _schema() -> list[str]:
    return sorted(connection.introspection.table_names())


@pytest.mark.django_db
@pytest.mark.skipif(CITUS_TESTS, reason="the refusal is for a database without Citus")
def test_without_citus_it_refuses_naming_the_database_and_changes_nothing():
    before = _schema()
    with pytest.raises(CommandError, match=r"Refused, nothing changed: database '.+' has no Citus extension"):
        call_command("distribute_tenants")
    assert _schema() == before


@pytest.mark.django_db
@pytest.mark.skipif(not CITUS_TESTS, reason="needs a Citus coordinator (make test-citus)")
def test_on_citus_a_second_run_changes_nothing_and_says_so():
    out = StringIO()
    call_command("distribute_tenants", stdout=out)
    assert "Already distributed" in out.getvalue() and "nothing changed" in out.getvalue()


def test_a_new_tenant_owned_table_is_distributed_and_what_shared_tables_touch_is_shared():
    layout = plan_layout(
        tables=[
            "sessions_app_tenant", "sessions_app_membership", "auth_user", "auth_user_groups", "auth_group",
            "sessions_app_conversation", "sessions_app_score", "django_session", "sessions_app_logingate",
        ],
        tenant_owned=["sessions_app_membership", "sessions_app_conversation", "sessions_app_score"],
        foreign_keys=[
            ("sessions_app_membership", "sessions_app_tenant"), ("sessions_app_membership", "auth_user"),
            ("auth_user_groups", "auth_user"), ("auth_user_groups", "auth_group"),
            ("sessions_app_conversation", "sessions_app_tenant"), ("sessions_app_score", "sessions_app_conversation"),
        ],
    )
    assert layout.distributed == ("sessions_app_conversation", "sessions_app_score")
    assert layout.reference == (
        "auth_group", "auth_user", "auth_user_groups", "sessions_app_membership", "sessions_app_tenant",
    )
    assert layout.local == ("django_session", "sessions_app_logingate")
