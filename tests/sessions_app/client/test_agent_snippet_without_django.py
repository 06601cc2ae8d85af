"""The README's agent snippet runs in an agent process where Django cannot even be imported: it writes every step
to a live Sessiondesk and searches the conversation's earlier history through the HTTP API."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, ModelResponse, TextPart, UserPromptPart

from sessions_app.models import Conversation, Run
from sessions_app.tenancy.api_keys import create_api_key
from tests.test_functional_core_is_pure import BLOCKER

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[3]

# The README leaves `model` to the reader; here it is a FunctionModel that searches, then answers from the hit.
PRELUDE = """
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import FunctionModel

def respond(messages, info):
    returns = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
    if returns:
        return ModelResponse(parts=[TextPart("From history: " + str(returns[0].content))])
    return ModelResponse(parts=[ToolCallPart("search_conversation_history", {"query": "overdue"})])

model = FunctionModel(respond)
"""


def readme_agent_snippet() -> str:
    readme = (ROOT / "README.md").read_text()
    match = re.search(r"<!-- agent-snippet -->\n```python\n(.*?)```", readme, re.S)
    assert match, "README.md lost its agent snippet"
    return match.group(1)


def test_the_readme_snippet_writes_and_searches_without_django(live_server, tenant, client):
    _, key = create_api_key(tenant, "server")
    earlier = [
        ModelRequest(parts=[UserPromptPart("Check invoices of order 4471.")]),
        ModelResponse(parts=[TextPart("Invoice INV-4471-3 is overdue by 12 days.")]),
    ]
    response = client.post(
        "/api/v1/snapshots",
        data=json.dumps(
            {
                "conversation_id": "c-42",
                "run_id": "earlier-run",
                "messages": ModelMessagesTypeAdapter.dump_python(earlier, mode="json"),
            }
        ),
        content_type="application/json",
        headers={"Authorization": f"Bearer {key}"},
    )
    assert response.status_code == 201

    code = "\n".join(
        [
            "BLOCKED = ('django', 'django_htmx', 'psycopg')",
            BLOCKER,
            f"SESSIONDESK_URL, SESSIONDESK_KEY = {live_server.url!r}, {key!r}",
            PRELUDE,
            readme_agent_snippet(),
            "import sys; assert not any(m == 'django' or m.startswith('django.') for m in sys.modules)",
            "print(result.output)",
        ]
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)

    assert result.returncode == 0, result.stderr
    assert "INV-4471-3" in result.stdout  # found through GET /api/v1/search, from the agent's process
    conversation = Conversation.objects.get(tenant=tenant, external_id="c-42")
    new_run = Run.objects.get(conversation=conversation, agent_name="support-bot")
    assert new_run.state == "complete"
    assert conversation.message_count == 2 + 4  # the earlier exchange, then prompt, search call, result, answer
