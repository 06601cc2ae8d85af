"""Gate 5: every message belongs to the run's conversation, in this tenant, with ids not confused."""

from sessions_app.audit import gates
from sessions_app.audit.vocabulary import Verdict
from tests.sessions_app.audit.audit_cases import context_for, mailer_history, mixed_conversation_history


def _details(messages, **overrides):
    return [f.detail for f in gates.check_conversation_scope(messages, context_for(messages, **overrides))]


def test_one_conversation_owned_by_the_tenant_is_in_scope():
    messages = mailer_history("conv-a")
    assert _details(messages) == []


def test_mixed_conversation_ids_without_a_merge_are_scope_drift():
    messages = mixed_conversation_history()
    findings = gates.check_conversation_scope(
        messages, context_for(messages, owned_conversation_ids=frozenset({"conv-a", "conv-b"}))
    )
    assert [f.code for f in findings] == [Verdict.SCOPE_DRIFT]
    assert "'conv-a' (4 message(s))" in findings[0].detail


def test_a_recorded_merge_reconciles_mixed_ids():
    messages = mixed_conversation_history()
    owned = frozenset({"conv-a", "conv-b"})
    assert (
        _details(messages, owned_conversation_ids=owned, merged_conversation_ids=frozenset({"conv-a"})) == []
    )


def test_a_conversation_this_tenant_does_not_own_is_named():
    messages = mixed_conversation_history()
    details = _details(messages, owned_conversation_ids=frozenset({"conv-b"}))
    assert "Conversation 'conv-a' in this history is not a conversation of this tenant." in details


def test_a_run_id_used_as_a_conversation_key_is_scope_drift():
    messages = mailer_history("run-1")
    assert "The run id 'run-1' is used as a conversation key." in _details(messages, run_id="run-1")
    other = mailer_history("run-0")
    assert any(
        "'run-0' is used as a conversation key" in d for d in _details(other, tenant_run_ids={"run-0"})
    )


def test_a_fork_that_kept_its_parents_conversation_id_is_scope_drift():
    messages = mailer_history("conv-a")
    forked = _details(messages, parent_run_id="run-0", parent_conversation_id="conv-a")
    assert any("branched from run 'run-0'" in d for d in forked)
    delegate = _details(messages, parent_run_id="orch-1", parent_conversation_id="orch-conv")
    assert delegate == []


OWNER = "a" * 64
OTHER = "b" * 64


def test_a_run_written_for_another_principal_than_the_owner_is_scope_drift():
    messages = mailer_history("conv-a")
    findings = gates.check_conversation_scope(
        messages,
        context_for(messages, owner_principal_hash=OWNER, run_principal_hashes=frozenset({OWNER, OTHER})),
    )
    assert [f.code for f in findings] == [Verdict.SCOPE_DRIFT]
    assert "written for principal bbbbbbbbbbbb…" in findings[0].detail
    assert "belongs to principal aaaaaaaaaaaa…" in findings[0].detail
    assert OTHER not in findings[0].detail  # shown truncated only


def test_a_run_of_the_owner_or_of_an_unowned_conversation_is_in_scope():
    messages = mailer_history("conv-a")
    assert _details(messages, owner_principal_hash=OWNER, run_principal_hashes=frozenset({OWNER})) == []
    assert _details(messages, run_principal_hashes=frozenset({OTHER})) == []


def test_a_replay_asked_for_another_principal_or_none_is_scope_drift():
    messages = mailer_history("conv-a")
    owned = {"owner_principal_hash": OWNER, "run_principal_hashes": frozenset({OWNER})}
    assert _details(messages, replay_principal_hash=OWNER, **owned) == []
    (other,) = _details(messages, replay_principal_hash=OTHER, **owned)
    assert other.startswith("Replay was asked for principal bbbbbbbbbbbb…")
    (none,) = _details(messages, replay_principal_hash="", **owned)
    assert none.startswith("Replay was asked for no principal")
    # Not a replay, or a conversation nobody owns: nothing to compare.
    assert _details(messages, **owned) == []
    assert _details(messages, replay_principal_hash=OTHER) == []
