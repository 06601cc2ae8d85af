"""Old numeric URLs (/conversations/12/…, /runs/34/…) redirect to the URLs that carry the objects' own ids."""

from django.http import HttpResponse, HttpResponseRedirect
from django.views.decorators.csrf import csrf_exempt

from sessions_app.dashboard.ids import quote_id
from sessions_app.models import Conversation, Run
from sessions_app.tenancy.permissions import Action, MemberRequest, member_view
from sessions_app.tenancy.scoping import get_scoped_or_404


def _moved(request: MemberRequest, target: str) -> HttpResponse:
    query = request.META.get("QUERY_STRING", "")
    response = HttpResponseRedirect(f"{target}?{query}" if query else target)
    # 301 for reads; 308 keeps a form's POST a POST (the target view checks CSRF and the role itself).
    response.status_code = 301 if request.method in ("GET", "HEAD") else 308
    return response


@csrf_exempt  # redirects only: the view the browser is sent to checks the CSRF token of a POST
@member_view(Action.READ_CONVERSATIONS)
def legacy_conversation_url(request: MemberRequest, pk: str, rest: str) -> HttpResponse:
    conversation = get_scoped_or_404(Conversation, request.tenant, pk=int(pk))
    return _moved(request, f"/c/{quote_id(conversation.external_id)}/{rest}")


@csrf_exempt
@member_view(Action.READ_CONVERSATIONS)
def legacy_run_url(request: MemberRequest, pk: str, rest: str) -> HttpResponse:
    run = get_scoped_or_404(Run, request.tenant, pk=int(pk))
    return _moved(request, f"/r/{quote_id(run.run_id)}/{rest}")
