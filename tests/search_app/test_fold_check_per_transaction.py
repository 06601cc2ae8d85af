"""The search tail's fold is checked once per transaction, however many writes index in it (an import of many
conversations), and a rolled-back savepoint never takes away the check of what commits."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import transaction
from pydantic_ai.messages import ModelMessagesTypeAdapter

from search_app import folding, index
from tests.agents import weather_messages

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def checks(monkeypatch):
    """The tenants of every fold check that ran after a commit."""
    seen: list[set[int]] = []
    monkeypatch.setattr(folding, "fold_when_due", lambda tenant_ids: seen.append(set(tenant_ids)))
    return seen


def test_an_import_of_many_conversations_checks_the_fold_once(tenant, tmp_path, checks):
    history = ModelMessagesTypeAdapter.dump_python(weather_messages(), mode="json")
    lines = [
        {"conversation_id": f"c-{i}", "run_id": f"r-{i}", "agent": "w", "state": "complete", "messages": history}
        for i in range(6)
    ]
    path = tmp_path / "batch.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    call_command("import_sessions", "--tenant", tenant.slug, str(path), stdout=StringIO())
    assert checks == [{tenant.id}]


def test_every_tenant_written_in_a_transaction_is_checked(checks):
    with transaction.atomic():
        for tenant_id in (1, 2, 1, 3):
            index._fold_after_commit({tenant_id})
    assert checks == [{1, 2, 3}]


def test_a_rolled_back_savepoint_keeps_the_checks_of_what_commits(checks):
    with transaction.atomic():
        index._fold_after_commit({1})
        with pytest.raises(RuntimeError), transaction.atomic():
            index._fold_after_commit({2})
            raise RuntimeError("rolled back")
        index._fold_after_commit({3})
    assert checks == [{1}, {3}]


def test_a_transaction_after_a_commit_gets_its_own_check(checks):
    for tenant_id in (1, 2):
        with transaction.atomic():
            index._fold_after_commit({tenant_id})
    assert checks == [{1}, {2}]
