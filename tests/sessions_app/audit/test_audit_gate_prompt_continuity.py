"""Gate 3: the loaded history carries the agent's prompt contract."""

from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.models.function import FunctionModel

from sessions_app.audit import gates
from sessions_app.audit.digests import prompt_sha256
from sessions_app.audit.vocabulary import ContractKind, Verdict
from tests.sessions_app.audit.audit_cases import (
    SYSTEM_PROMPT,
    context_for,
    history_without_system_prompt,
    mailer_history,
)


def _answer(messages, info):
    return ModelResponse(parts=[TextPart("ok")])


def _dynamic_history():
    agent = Agent(
        FunctionModel(_answer), instructions=lambda: "Today is a holiday; answer briefly.", name="dyn"
    )
    return agent.run_sync("hi", conversation_id="conv-a").all_messages()


def test_a_history_carrying_the_registered_prompt_hash_passes():
    messages = mailer_history()
    assert gates.check_prompt_continuity(messages, context_for(messages)) == []


def test_the_hash_of_a_prompt_file_with_a_trailing_newline_matches():
    assert prompt_sha256(SYSTEM_PROMPT + "\n") == prompt_sha256(SYSTEM_PROMPT)


def test_a_history_whose_system_prompt_was_dropped_is_a_gap():
    messages = history_without_system_prompt()
    (finding,) = gates.check_prompt_continuity(messages, context_for(messages))
    assert finding.code == Verdict.SYSTEM_PROMPT_GAP
    assert "carries no system prompt" in finding.detail
    assert SYSTEM_PROMPT not in finding.detail


def test_a_different_prompt_than_the_contract_is_a_gap():
    messages = mailer_history()
    contract = gates.PromptContractFact(ContractKind.HASH, prompt_sha256("You are a different agent."))
    (finding,) = gates.check_prompt_continuity(messages, context_for(messages, prompt_contract=contract))
    assert "1 system prompt part(s)" in finding.detail


def test_a_label_contract_passes_when_the_prompt_carries_the_label():
    messages = mailer_history()
    carried = gates.PromptContractFact(ContractKind.LABEL, "Acme billing mailer")
    missing = gates.PromptContractFact(ContractKind.LABEL, "prompt-v7")
    assert gates.check_prompt_continuity(messages, context_for(messages, prompt_contract=carried)) == []
    (finding,) = gates.check_prompt_continuity(messages, context_for(messages, prompt_contract=missing))
    assert "prompt-v7" in finding.detail


def test_an_agent_declared_dynamic_passes_on_recorded_instructions_without_a_system_prompt():
    messages = _dynamic_history()
    contract = gates.PromptContractFact(ContractKind.DYNAMIC)
    assert gates.check_prompt_continuity(messages, context_for(messages, prompt_contract=contract)) == []
    # The same history judged against a hash contract has no system prompt to match.
    (finding,) = gates.check_prompt_continuity(messages, context_for(messages))
    assert finding.code == Verdict.SYSTEM_PROMPT_GAP


def test_a_dynamic_declaration_without_any_recorded_instructions_is_a_gap():
    messages = history_without_system_prompt()
    contract = gates.PromptContractFact(ContractKind.DYNAMIC)
    (finding,) = gates.check_prompt_continuity(messages, context_for(messages, prompt_contract=contract))
    assert "dynamic instructions" in finding.detail


def test_without_a_contract_any_system_prompt_or_instructions_pass_and_none_is_a_gap():
    assert (
        gates.check_prompt_continuity(mailer_history(), context_for(mailer_history(), prompt_contract=None))
        == []
    )
    dynamic = _dynamic_history()
    assert gates.check_prompt_continuity(dynamic, context_for(dynamic, prompt_contract=None)) == []
    bare = history_without_system_prompt()
    (finding,) = gates.check_prompt_continuity(bare, context_for(bare, prompt_contract=None))
    assert "no prompt contract is registered for agent 'mailer'" in finding.detail


def test_changing_the_contract_changes_the_finding_key():
    bare = history_without_system_prompt()
    one = gates.check_prompt_continuity(bare, context_for(bare))[0].key
    other = gates.PromptContractFact(ContractKind.LABEL, "v2")
    assert gates.check_prompt_continuity(bare, context_for(bare, prompt_contract=other))[0].key != one
