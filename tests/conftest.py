import pytest

from tests.factories import make_tenant


@pytest.fixture
def tenant(db):
    return make_tenant("acme", "Acme")


@pytest.fixture
def other_tenant(db):
    return make_tenant("globex", "Globex")
