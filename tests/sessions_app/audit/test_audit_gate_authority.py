"""Gate 2: history that came from a client is untrusted, however well-formed."""

from sessions_app.audit import gates
from sessions_app.audit.vocabulary import EventClass, Verdict
from tests.sessions_app.audit.audit_cases import context_for, mailer_history


def test_history_from_server_sources_only_is_trusted():
    messages = mailer_history()
    assert gates.check_authority(messages, context_for(messages, sources=frozenset({"server"}))) == []


def test_a_well_formed_history_supplied_by_a_client_is_untrusted():
    messages = mailer_history()
    (finding,) = gates.check_authority(messages, context_for(messages, sources=frozenset({"client"})))
    assert finding.code == Verdict.UNTRUSTED_HISTORY
    assert finding.event_class == EventClass.UNTRUSTED_HISTORY
    assert "server-side source" in finding.guidance


def test_one_client_snapshot_among_server_ones_taints_the_run():
    messages = mailer_history()
    (finding,) = gates.check_authority(
        messages, context_for(messages, sources=frozenset({"server", "client"}))
    )
    assert finding.code == Verdict.UNTRUSTED_HISTORY
