"""A run's snapshots and the difference between consecutive ones (operators)."""

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from sessions_app.tenancy.permissions import Action, MemberRequest, get_run_for_member, member_view
from sessions_app.transcripts.masking import masker_for
from sessions_app.transcripts.snapshots import diff_with_previous, snapshots_of


@require_GET
@member_view(Action.VIEW_SNAPSHOTS)
def snapshot_list(request: MemberRequest, run_id: str) -> HttpResponse:
    run = get_run_for_member(request, run_id)
    return render(
        request,
        "snapshots.html",
        {"section": "conversations", "run": run, "snapshots": snapshots_of(run)},
    )


@require_GET
@member_view(Action.VIEW_SNAPSHOTS)
def snapshot_diff(request: MemberRequest, run_id: str, seq: int) -> HttpResponse:
    run = get_run_for_member(request, run_id)
    snapshot, previous, diff = diff_with_previous(run, seq, masker_for(request.tenant))
    return render(
        request,
        "snapshot_diff.html",
        {"section": "conversations", "run": run, "snapshot": snapshot, "previous": previous, "diff": diff},
    )
