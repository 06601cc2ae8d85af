"""POST /api/v1/scores: an evaluation job posts a judgment (a server key; the key is recorded as the author)."""

from typing import Annotated

from django.http import JsonResponse
from django.views.decorators.http import require_POST
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StringConstraints

from input_errors import RejectedInput
from sessions_app.api.auth import ApiRequest, api_key_required, key_actor
from sessions_app.api.body import json_body
from sessions_app.core.api_input import Identifier, SafeText, SegmentId, validate_model
from sessions_app.models import Conversation, Source
from sessions_app.review.scores import set_score
from sessions_app.review.targets import target_of
from sessions_app.tenancy.scoping import scoped


class ScoreInput(BaseModel):
    """A score on a conversation, or on one of its runs (`run_id`) or messages (`position`), never both."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    conversation_id: Identifier
    name: str = Field(min_length=1, max_length=64, description="A score name the tenant's admin defined")
    value: StrictBool | StrictInt | StrictFloat | Annotated[SafeText, StringConstraints(max_length=64)] = Field(
        description="A number in the score's range, true/false, or one of its categories"
    )
    run_id: SegmentId | None = None
    position: int | None = Field(default=None, ge=0, le=2**31 - 1)


@require_POST
@api_key_required(kind=Source.SERVER)
def post_score(request: ApiRequest) -> JsonResponse:
    body = validate_model(ScoreInput, json_body(request), "score", RejectedInput)
    conversation = scoped(Conversation, request.tenant).filter(external_id=body.conversation_id).first()
    if conversation is None:
        raise RejectedInput(f"No conversation {body.conversation_id!r}.", status=404)
    target = target_of(body.run_id or "", body.position)
    score = set_score(request.tenant, conversation, target, body.name, body.value, author=key_actor(request))
    return JsonResponse(
        {
            "score_id": score.pk,
            "conversation_id": conversation.external_id,
            "target": score.target,
            "name": body.name,
            "number": score.number,
            "text": score.text,
            "author": score.author,
        },
        status=201,
    )
