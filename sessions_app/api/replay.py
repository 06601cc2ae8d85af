"""Replay endpoint: the history an agent resumes from, only when its latest run's audit says READY.

    GET /api/v1/conversations/<conversation_id>/replay?principal=…

200 `{"verdict": "READY", "conversation_id", "run_id", "messages": [...]}` (ModelMessagesTypeAdapter JSON, ready
for `message_history`); 409 `{"verdict", "conversation_id", "run_id", "findings": [...]}` otherwise. A server key
may ask for any conversation of its tenant, a client key only for history it wrote.
"""

import json

from django.http import HttpResponse, JsonResponse
from django.views.decorators.http import require_GET

from sessions_app.api.auth import ApiRequest, api_key_required, key_actor
from sessions_app.audit.replay import replay_history


@require_GET
@api_key_required
def get_replay(request: ApiRequest, conversation_id: str) -> HttpResponse:
    answer = replay_history(
        request.tenant,
        conversation_id,
        principal=request.GET.get("principal"),
        api_key=request.api_key,
        actor=key_actor(request),
    )
    head = {"verdict": answer.verdict, "conversation_id": answer.conversation_id, "run_id": answer.run_id}
    if answer.allowed and answer.messages_json is not None:
        # The stored bytes go out as they are: no parse and re-dump of a possibly long history.
        body = json.dumps(head)[:-1] + ', "messages": ' + answer.messages_json + "}"
        response = HttpResponse(body, content_type="application/json")
    else:
        response = JsonResponse({**head, "findings": answer.findings}, status=409)
    response["Cache-Control"] = "no-store"
    return response
