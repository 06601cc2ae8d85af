"""The OpenAPI 3.1 document at /api/v1/openapi.json, and Schemathesis against a live server: for every operation,
a bounded number of generated requests (valid by the document and not), none answered 5xx, every answer matching
the document (status code, content type, body schema)."""

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.generation import GenerationMode

from sessions_app.api.openapi import MODELS, document
from sessions_app.ingest.payloads import parse_snapshot
from sessions_app.ingest.service import ingest_snapshots
from sessions_app.tenancy.api_keys import create_api_key
from tests.factories import make_tenant
from tests.sessions_app.api.test_hostile_input import snapshot

EXAMPLES_PER_OPERATION = 12
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


def test_the_document_is_served_and_names_every_body_model(client):
    served = client.get("/api/v1/openapi.json")
    assert served.status_code == 200
    body = served.json()
    assert body["openapi"] == "3.1.0"
    assert {model.__name__ for model in MODELS} <= set(body["components"]["schemas"])
    assert body == document()


def test_the_document_body_schemas_are_the_validating_models():
    for model in MODELS:
        assert document()["components"]["schemas"][model.__name__]["properties"] == model.model_json_schema(
            ref_template="#/components/schemas/{model}"
        )["properties"]


@pytest.mark.django_db(transaction=True)
def test_schemathesis_finds_no_5xx_and_no_answer_outside_the_document(live_server):
    tenant = make_tenant("acme", "Acme")
    key = create_api_key(tenant, "server")[1]
    ingest_snapshots(tenant, [parse_snapshot(snapshot(conversation_id="c-1", run_id="r-1"))], source="server",
                     via="api")
    schema = schemathesis.openapi.from_url(f"{live_server.url}/api/v1/openapi.json")
    headers = {"Authorization": f"Bearer {key}"}
    failures = []
    for result in schema.get_all_operations():
        operation = result.ok()
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(
                max_examples=EXAMPLES_PER_OPERATION,
                deadline=None,
                database=None,
                derandomize=True,
                suppress_health_check=list(HealthCheck),
            )
            def exercise(case):
                case.call_and_validate(base_url=live_server.url, headers=headers, checks=CHECKS)

            try:
                exercise()
            except Exception as error:  # collected: one report for every operation that failed
                failures.append(f"{operation.label} ({mode.value}): {str(error)[:1500]}")
    assert not failures, "\n\n".join(failures)
