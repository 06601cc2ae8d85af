import pytest
from django.core.management import call_command

from tests.citus_mode import CITUS_TEST_SHARDS, CITUS_TESTS
from tests.factories import make_tenant


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    if CITUS_TESTS:
        with django_db_blocker.unblock():
            call_command("distribute_tenants", "--shard-count", str(CITUS_TEST_SHARDS))


@pytest.fixture
def tenant(db):
    return make_tenant("acme", "Acme")


@pytest.fixture
def other_tenant(db):
    return make_tenant("globex", "Globex")
