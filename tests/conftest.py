import os

import pytest
from django.core.management import call_command

from tests.factories import make_tenant

# `make test-citus`: the test database is a Citus coordinator's, distributed by tenant once migrated. Four shards
# over the two workers: every placement question a test asks (one shard, a move) is the same as with 32.
CITUS_TESTS = os.environ.get("SESSIONDESK_CITUS_TESTS") == "1"
CITUS_TEST_SHARDS = 4


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
