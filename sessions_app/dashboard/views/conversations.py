"""The conversation list and one conversation's runs and recovered transcript."""

from dataclasses import replace
from typing import Any
from urllib.parse import urlencode

from django.http import Http404, HttpResponse, HttpResponseBase, HttpResponseRedirect, QueryDict
from django.middleware.csrf import get_token
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from input_errors import RejectedInput
from sessions_app.audit import run_verdicts
from sessions_app.audit import service as audit_service
from sessions_app.audit.events import record_reveal
from sessions_app.audit.repair_places import unrecorded_calls
from sessions_app.core import paging
from sessions_app.dashboard import conversation_list, saved_views
from sessions_app.dashboard.forms import ConversationFilterForm
from sessions_app.dashboard.history import go_to, wants_fragment
from sessions_app.dashboard.ids import conversation_url, url_for_pasted_id
from sessions_app.dashboard.search_access import ranked_conversation_ids
from sessions_app.dashboard.timeline_html import TimelineOptions, opens_by_default, render_timeline
from sessions_app.dashboard.transcript_html import CompactionMark, RenderOptions, UnrecordedMark, render_messages
from sessions_app.dashboard.views.review import review_panel
from sessions_app.models import Conversation
from sessions_app.review import listing as review_listing
from sessions_app.review.score_filters import parse_review_query
from sessions_app.tenancy.permissions import (
    Action,
    MemberRequest,
    get_conversation_for_member,
    get_run_for_member,
    member_view,
)
from sessions_app.transcripts.masking import masker_for
from sessions_app.transcripts.reading import read_window, window_start_for
from sessions_app.transcripts.runtime_spans import compactions_by_position
from sessions_app.transcripts.timeline import read_timeline


@require_GET
@member_view(Action.READ_CONVERSATIONS)
def conversation_list_page(request: MemberRequest) -> HttpResponseBase:
    return list_page(request, request.GET)


def list_page(
    request: MemberRequest, params: QueryDict, *, save_error: str = "", save_name: str = ""
) -> HttpResponseBase:
    """The list for `params` (the page's query string; a refused "save as view" shows it again with its error)."""
    form = ConversationFilterForm(params, agents=conversation_list.agent_names(request.tenant))
    context: dict[str, Any] = {
        "section": "conversations",
        "form": form,
        "view_query": saved_views.normalized_query(params),
        "save_error": save_error,
        "save_name": save_name,
        "deletable_views": saved_views.views_of(request.tenant) if Action.DELETE_VIEWS in request.grants else [],
    }
    if save_error:
        context["page_url"] = f"/conversations/?{context['view_query']}"
    if not form.is_valid():
        context.update(rows=[], next_cursor=None, error=" ".join(str(e) for errs in form.errors.values() for e in errs))
        return render(request, "conversations.html", context, status=400)
    filters = form.filters()
    sort = conversation_list.SORTS[form.sort_key()]
    audit_service.refresh_tenant_verdicts(request.tenant)  # a run gone quiet reads STUCK here, not a day later
    search_notice = ""
    query = form.cleaned_data.get("q", "").strip()
    # Issue 27: score:/label:/sort: clauses narrow and sort the list; the rest of the text is searched.
    try:
        review = parse_review_query(query)
        query = review.text
        narrowed = review_listing.narrowed(request.tenant, review)
    except RejectedInput as error:
        context.update(rows=[], next_cursor=None, error=error.message)
        return render(request, "conversations.html", context, status=error.status)
    if query and not save_error and (target := url_for_pasted_id(request.tenant, query)):
        return go_to(request, target)  # a pasted conversation or run id goes straight to it
    if query:
        # Free text is a ranked search; the list then shows its conversations in rank order, no further pages.
        found = ranked_conversation_ids(request.tenant, query)
        search_notice = found.notice
        filters = conversation_list.ConversationFilters(**{**filters.__dict__, "conversation_ids": found.ids})
        qs = narrowed(conversation_list.filtered_conversations(request.tenant, filters))
        by_pk = {c.pk: c for c in qs}
        page = conversation_list.Page([by_pk[pk] for pk in found.ids if pk in by_pk], None)
    elif review.sort:
        qs = narrowed(conversation_list.filtered_conversations(request.tenant, filters))
        page = conversation_list.Page(
            review_listing.sorted_page(request.tenant, qs, review, conversation_list.PAGE_SIZE), None
        )
    else:
        qs = narrowed(conversation_list.filtered_conversations(request.tenant, filters))
        try:
            page = conversation_list.page_after(qs, sort, form.cleaned_data.get("cursor") or None)
        except paging.BadCursor as error:
            context.update(rows=[], next_cursor=None, error=str(error))
            return render(request, "conversations.html", context, status=400)
    params = params.copy()
    params.pop("cursor", None)
    context.update(
        row_scores=review_listing.row_scores(request.tenant, page.conversations),
        rows=conversation_list.describe(request.tenant, page.conversations),
        next_cursor=page.next_cursor,
        query_without_cursor=params.urlencode(),
        search_notice=search_notice,
        first_page=not form.cleaned_data.get("cursor"),
    )
    if wants_fragment(request):
        # The infinite-scroll request asks for more rows; a filter change replaces the whole result region.
        partial = "rows" if form.cleaned_data.get("cursor") else "results"
        return render(request, f"conversations.html#{partial}", context)
    return render(request, "conversations.html", context, status=400 if save_error else 200)


def _int_param(request: MemberRequest, name: str) -> int | None:
    try:
        return int(request.GET.get(name, ""))
    except ValueError:
        return None


def _unrecorded_marks(request: MemberRequest, conversation: Conversation) -> dict[int, list[UnrecordedMark]]:
    marks: dict[int, list[UnrecordedMark]] = {}
    for call in unrecorded_calls(request.tenant, conversation):
        if call.place.position is None:
            continue  # an empty transcript: the repairs page still links the snapshot
        seq = call.place.snapshot_seq
        marks.setdefault(call.place.position, []).append(
            UnrecordedMark(
                anchor=call.place.anchor,
                run_id=call.run_id,
                tool_name=call.tool_name,
                detail=call.detail,
                snapshot_url=reverse("snapshot-diff", args=[call.run_id, seq])
                if seq is not None and Action.VIEW_SNAPSHOTS in request.grants
                else "",
                audit_url=reverse("run-audit", args=[call.run_id]) if Action.VIEW_AUDIT in request.grants else "",
            )
        )
    return marks


def _compaction_marks(conversation: Conversation) -> dict[int, list[CompactionMark]]:
    """The compaction boundaries OTLP's `compact_messages` spans reported, with their strategy and counts."""
    return {
        position: [
            CompactionMark(
                anchor=f"compaction-{c.pk}",
                run_id=c.run_id,
                strategy=c.strategy,
                messages_before=c.messages_before,
                messages_after=c.messages_after,
                tokens_before=c.tokens_before,
                tokens_after=c.tokens_after,
            )
            for c in compactions
        ]
        for position, compactions in compactions_by_position(conversation).items()
    }


def _render_options(
    request: MemberRequest, conversation: Conversation, at: int | None, revealed: int | None
) -> RenderOptions:
    may_reveal = Action.REVEAL_CREDENTIALS in request.grants
    # Built once per page, not once per message; the position goes where the placeholder is.
    reveal_url = conversation_url(conversation.external_id) + "reveal/{position}"
    return RenderOptions(
        unrecorded=_unrecorded_marks(request, conversation),
        compactions=_compaction_marks(conversation),
        conversation_pk=conversation.pk,
        highlighted=at,
        revealed=revealed,
        reveal_csrf_token=get_token(request) if may_reveal else None,
        reveal_url=reveal_url,
    )


def _with_timeline(request: MemberRequest, context: dict[str, Any]) -> dict[str, Any]:
    """The whole page adds the runs timeline (fragments of the transcript do not need it)."""
    conversation = context["conversation"]
    interrupted = [
        (call.run_id, call.tool_name, call.tool_call_hash, call.place.anchor)
        for call in unrecorded_calls(request.tenant, conversation)
    ]
    timeline = read_timeline(conversation, interrupted)
    verdicts = run_verdicts.verdicts_for_runs(request.tenant, [run.run.pk for run in timeline.runs])
    context["timeline_html"] = render_timeline(
        timeline,
        TimelineOptions(
            verdicts=verdicts,
            operator_links=Action.VIEW_SNAPSHOTS in request.grants,
            expanded=frozenset(request.GET.getlist("steps")),
            all_runs=request.GET.get("runs") == "all",
        ),
    )
    return context


def _conversation_context(
    request: MemberRequest,
    conversation_id: str,
    *,
    at: int | None,
    start: int | None,
    unmasked: frozenset[int] = frozenset(),
) -> dict[str, Any]:
    conversation = get_conversation_for_member(request, conversation_id)
    asked = start if start is not None else at
    mask = masker_for(request.tenant)
    window = read_window(conversation, window_start_for(asked), mask=mask, unmasked_positions=unmasked)
    # A position past the end (an old permalink, a typed ?at=99999) showed only an "Earlier messages" link: say
    # which position is missing and show the conversation's last messages instead.
    missing = asked if asked is not None and window.total and not window.messages else None
    if missing is not None:
        window = read_window(conversation, window_start_for(window.total - 1), mask=mask, unmasked_positions=unmasked)
        at = None
    revealed = next(iter(unmasked), None)
    return {
        "rendered_messages": render_messages(window.messages, _render_options(request, conversation, at, revealed)),
        "section": "conversations",
        "conversation": conversation,
        "window": window,
        "at": at,
        "missing_position": missing,
    }


# Parameters that ask for the timeline itself (a run's steps, every run, or the timeline without JavaScript):
# the page then renders it in place, so the anchor they carry lands on its row.
TIMELINE_PARAMS = ("timeline", "steps", "runs")


@require_GET
@member_view(Action.READ_CONVERSATIONS)
def conversation_page(request: MemberRequest, conversation_id: str) -> HttpResponse:
    start = _int_param(request, "start")
    context = _conversation_context(request, conversation_id, at=_int_param(request, "at"), start=start)
    if wants_fragment(request) and start is not None:
        return render(request, "conversation.html#messages", context)
    conversation = context["conversation"]
    context.update(review_panel(request, conversation))  # issue 27: scores, comments, links
    asked = any(name in request.GET for name in TIMELINE_PARAMS)
    # Transcript first: the runs panel is open only when the timeline asked for, or small enough to leave the
    # first message above the fold. Open, it is rendered in place, so nothing is inserted above a permalinked
    # message after the browser scrolled to it; folded, its timeline loads when it is opened
    # (conversation_timeline), and without JavaScript a link inside shows the page with it in place.
    context["runs_open"] = asked or opens_by_default(
        conversation.run_count, conversation.model_step_count, conversation.tool_call_count
    )
    if context["runs_open"]:
        context = _with_timeline(request, context)
    return render(request, "conversation.html", context, status=404 if context["missing_position"] is not None else 200)


@require_GET
@member_view(Action.READ_CONVERSATIONS)
def conversation_timeline(request: MemberRequest, conversation_id: str) -> HttpResponseBase:
    """The runs timeline of a conversation page, as the fragment its page loads; opened as a page, the page
    with its timeline in place."""
    conversation = get_conversation_for_member(request, conversation_id)
    if not wants_fragment(request):
        return HttpResponseRedirect(f"{conversation_url(conversation.external_id)}?timeline=inline#timeline")
    context = _with_timeline(request, {"conversation": conversation})
    return render(request, "conversation.html#timeline", context)


@require_POST
@member_view(Action.REVEAL_CREDENTIALS)
def reveal_message(request: MemberRequest, conversation_id: str, position: int) -> HttpResponse:
    """An admin shows one message without masking; the reveal is recorded as an audit event."""
    context = _conversation_context(request, conversation_id, at=position, start=None, unmasked=frozenset({position}))
    shown = [m for m in context["window"].messages if m.position == position and not m.summary_artifact]
    if not shown:
        raise Http404("No message at that position.")
    record_reveal(request.tenant, context["conversation"], shown[0].run_id, request.user)
    if wants_fragment(request):
        # The fragment replaces the message alone: a mark shown after it stays where it is, so none is added.
        options = replace(
            _render_options(request, context["conversation"], position, position), unrecorded={}, compactions={}
        )
        return HttpResponse(render_messages(shown, options))
    return render(request, "conversation.html", _with_timeline(request, context))


@require_GET
@member_view(Action.READ_CONVERSATIONS)
def run_page(request: MemberRequest, run_id: str) -> HttpResponse:
    """A run lives on its conversation's page: its place in the run timeline, shown with its steps."""
    run = get_run_for_member(request, run_id)
    steps = urlencode({"steps": run.run_id})
    return HttpResponseRedirect(f"{conversation_url(run.conversation.external_id)}?{steps}#run-{run.pk}")
