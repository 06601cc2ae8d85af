"""Receipt, wait and prompt-contract input is validated before anything touches the database."""

from datetime import UTC, datetime

import pytest

from sessions_app.audit.inputs import AuditInputError, parse_prompt_contract, parse_receipt, parse_wait

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
RECEIPT = {"run_id": "r-1", "effect": "e", "evidence": "outcome", "checked_by": "reader"}


def test_a_valid_receipt_is_trimmed_and_its_reference_is_optional():
    parsed = parse_receipt({**RECEIPT, "effect": "  invoice-email-sent "})
    assert (parsed.effect, parsed.reference) == ("invoice-email-sent", "")


def test_a_receipt_that_is_not_an_object_is_refused():
    with pytest.raises(AuditInputError, match="A receipt must be a JSON object, got array"):
        parse_receipt([RECEIPT])


def test_a_wait_deadline_is_parsed_with_its_time_zone():
    parsed = parse_wait(
        {"run_id": "r", "owner": "o", "decision": "d", "deadline": "2026-12-01T09:00:00+01:00"}, now=NOW
    )
    assert parsed.deadline == datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
    assert parsed.resume_token is None


def test_a_wait_without_a_deadline_names_the_field():
    with pytest.raises(AuditInputError, match="'deadline' is required"):
        parse_wait({"run_id": "r", "owner": "o", "decision": "d"}, now=NOW)


def test_a_hash_contract_is_normalized_to_lower_case():
    parsed = parse_prompt_contract("mailer", {"kind": "hash", "value": "AB" * 32})
    assert parsed.value == "ab" * 32


def test_an_agent_name_that_is_too_long_is_refused():
    with pytest.raises(AuditInputError, match="'agent' is longer than 200"):
        parse_prompt_contract("a" * 201, {"kind": "dynamic"})


def test_a_null_resume_token_means_none_was_given():
    parsed = parse_wait(
        {"run_id": "r", "owner": "o", "decision": "d", "deadline": "2999-01-01T09:00:00+00:00", "resume_token": None},
        now=NOW,
    )
    assert parsed.resume_token is None
