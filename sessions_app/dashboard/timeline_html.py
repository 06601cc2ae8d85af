"""HTML for the runs timeline on the conversation page: a table of runs, steps and tool calls with a waterfall.

Built in Python from esc pieces like transcript_html (200 runs with their steps as template rows cost too
much). Bars are SVG rectangles positioned by attributes: the Content-Security-Policy refuses inline styles.
"""

from dataclasses import dataclass
from datetime import datetime
from urllib.parse import quote

from django.utils.safestring import SafeString, mark_safe

from sessions_app.dashboard.ids import quote_id
from sessions_app.dashboard.markup import esc
from sessions_app.dashboard.templatetags.dashboard import state_tone, verdict_tone
from sessions_app.transcripts.run_timeline import (
    ConversationTimeline,
    ReviewFacts,
    RunTimeline,
    Step,
    ToolSpan,
    Usage,
)

# Step and tool-call rows shown inline, runs in timeline order; the steps of runs past it fold into a link that
# shows them (a 1,000-step run or 200 runs of steps as rows cost more than the rest of the page).
STEP_ROWS = 120
# Runs shown before "show all" (totals and the time axis always cover every run).
RUN_ROWS = 60


# What the runs panel may take above the transcript, open, before it would push the first message below the fold
# of a 900-px window (the page head and the transcript's own bar take the rest); a larger timeline starts folded.
OPEN_BUDGET_PX = 420
RUN_ROW_PX = 95  # a run's row: id, badges, agent, times and links on two or three lines
STEP_ROW_PX = 40  # a step or tool call: one line
TABLE_PX = 110  # totals line, header and footer


def opens_by_default(runs: int, steps: int, tool_calls: int) -> bool:
    """Whether the runs panel starts open: only when its timeline fits above the first message."""
    return TABLE_PX + runs * RUN_ROW_PX + (steps + tool_calls) * STEP_ROW_PX <= OPEN_BUDGET_PX


@dataclass(frozen=True)
class TimelineOptions:
    verdicts: dict[int, str]  # run pk → verdict
    operator_links: bool = False  # snapshots, receipts and audit links
    expanded: frozenset[str] = frozenset()  # run ids whose steps are shown whatever their number
    all_runs: bool = False  # every run, not the first RUN_ROWS


def tokens(n: int) -> str:
    return f"{n:,}"


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def _time(value: datetime | None, fmt: str) -> str:
    if value is None:
        return "—"
    return f'<time datetime="{esc(value.isoformat())}">{value.strftime(fmt)}</time>'


def span_label(start: datetime | None, end: datetime | None) -> str:
    """Start → end; the end keeps its date whenever it falls on another day than the start."""
    text = _time(start, "%Y-%m-%d %H:%M:%S")
    if end is not None and start is not None:
        fmt = "%H:%M:%S" if end.date() == start.date() else "%Y-%m-%d %H:%M:%S"
        text += f" → {_time(end, fmt)}"
    return text


def _usage_cells(usage: Usage) -> str:
    cache = tokens(usage.cache_read)
    if usage.cache_write:
        cache += f" / {tokens(usage.cache_write)} written"
    return (
        f'<td class="num">{tokens(usage.input)}</td><td class="num">{tokens(usage.output)}</td>'
        f'<td class="num optional">{cache}</td>'
    )


def _bar(
    axis: ConversationTimeline | RunTimeline, start: datetime | None, end: datetime | None, kind: str, label: str = ""
) -> str:
    """A span on its axis: runs on the conversation's, steps, tool calls and reviews on their run's own."""
    x, width = axis.bar(start, end)
    if not width:
        return '<td class="bar"></td>'
    return (
        f'<td class="bar"><svg viewBox="0 0 1000 10" preserveAspectRatio="none" role="img" '
        f'aria-label="{esc(label or duration(_seconds(start, end)))}"><rect class="{kind}" x="{x}" y="1" '
        f'width="{width}" height="8"></rect></svg></td>'
    )


def _run_bar(timeline: ConversationTimeline, run: RunTimeline) -> str:
    if not run.open_ended:
        return _bar(timeline, run.started_at, run.ended_at, "run")
    # No end recorded: drawn to the end of the axis (which its last stamp does not stretch) and marked open.
    return _bar(
        timeline,
        run.started_at,
        timeline.axis_end,
        "run open",
        "open-ended: still running, no end recorded; clipped at the end of the axis after "
        f"{duration(_seconds(run.started_at, run.work_ended_at))} of known work",
    )


def _run_duration(run: RunTimeline) -> str:
    if not run.open_ended:
        return duration(run.seconds)
    work = f"{duration(_seconds(run.started_at, run.work_ended_at))} of steps" if run.steps else "no steps"
    return (
        '<span class="badge warn" title="Still running with no end recorded; the waterfall clips it">open</span>'
        f'<div class="small muted">{work}</div>'
    )


def _run_span(run: RunTimeline) -> str:
    if not run.open_ended:
        return span_label(run.started_at, run.ended_at)
    # Its last stamp is no end (a part stamped when it was stored, months later): say so instead of a span.
    return f"{span_label(run.started_at, None)} → no end recorded"


def _seconds(start: datetime | None, end: datetime | None) -> float | None:
    return (end - start).total_seconds() if start and end and end >= start else None


def _step_rows(run: RunTimeline) -> int:
    tools = sum(len(step.tools) + sum(len(t.reviews) for t in step.tools) for step in run.steps)
    return len(run.steps) + tools + len(run.interrupted)


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _fold_link(run: RunTimeline) -> str:
    tools = sum(len(step.tools) for step in run.steps) + len(run.interrupted)
    text = _plural(len(run.steps), "step") + (f", {_plural(tools, 'tool call')}" if tools else "")
    return (
        f' · <a class="fold" href="?steps={esc(quote(run.run.run_id, safe=""))}#run-{run.run.pk}">Show its {text}</a>'
    )


def _run_row(timeline: ConversationTimeline, run: RunTimeline, options: TimelineOptions, folded: bool) -> str:
    facts = run.run
    verdict = options.verdicts.get(facts.pk, "")
    quoted = quote_id(facts.run_id)
    badges = f' <span class="badge {state_tone(facts.state)}">{esc(facts.state)}</span>'
    if verdict:
        badges += f' <span class="badge {verdict_tone(verdict)}">{esc(verdict)}</span>'
    links = ""
    if options.operator_links:
        links = (
            f' · <a href="/r/{esc(quoted)}/snapshots/">Snapshots</a> · <a href="/r/{esc(quoted)}/receipts/">Receipts'
            " &amp; waits</a>"
        )
        if verdict:
            links += f' · <a href="/r/{esc(quoted)}/audit">Audit</a>'
    parent = f" · child of <code>{esc(facts.parent_run_id)}</code>" if facts.parent_run_id else ""
    return (
        f'<tr class="run depth-{run.depth}" id="run-{facts.pk}"><th scope="row">'
        f'<a class="mono" href="/r/{esc(quoted)}/" title="{esc(facts.run_id)}">{esc(facts.run_id)}</a> '
        f'<button type="button" class="secondary small" data-copy="{esc(facts.run_id)}" hidden>Copy id</button>'
        f'{badges}<div class="small muted">{esc(facts.agent_name or "(no agent name)")}{parent} · '
        f"{_run_span(run)}{links}{_fold_link(run) if folded else ''}</div></th>"
        f'<td class="small">{esc(", ".join(run.models) or "—")}</td><td class="num">{_run_duration(run)}</td>'
        f"{_usage_cells(run.usage)}{_run_bar(timeline, run)}</tr>"
    )


def _step_row(run: RunTimeline, number: int, step: Step) -> str:
    return (
        f'<tr class="step depth-{run.depth}"><th scope="row" class="small">Step {number} · '
        f'<a href="#m-{step.position}">#{step.position}</a> · {_time(step.ended_at, "%H:%M:%S")}</th>'
        f'<td class="small mono">{esc(step.model_name or "—")}</td><td class="num">{duration(step.seconds)}</td>'
        f"{_usage_cells(step.usage)}{_bar(run, step.started_at, step.ended_at, 'step')}</tr>"
    )


def _tool_row(run: RunTimeline, tool: ToolSpan) -> str:
    tone = "bad" if tool.status in ("no result", "failed", "started", "interrupted") else "plain"
    result = ""
    if tool.result_position is not None:
        result = f' · <a href="#m-{tool.result_position}">result #{tool.result_position}</a>'
    elif tool.anchor:
        result = f' · <a href="#{esc(tool.anchor)}">in place</a> (only a snapshot holds it)'
    return (
        f'<tr class="tool depth-{run.depth}"><th scope="row" class="small">Tool <code>{esc(tool.tool_name)}</code> '
        f'<span class="badge {tone}">{esc(tool.status)}</span>{result}</th><td></td>'
        f'<td class="num">{duration(tool.seconds)}</td><td></td><td></td><td class="optional"></td>'
        f"{_bar(run, tool.started_at, tool.ended_at, 'tool')}</tr>"
    )


REVIEW_LABELS = {"approval_review": "Approval review", "judge": "Judge"}
# approval_reviewer: `approve` lets the call run, `ask` sends it to a person; tool_call_judge's verdicts.
REVIEW_TONES = {"approve": "ok", "allow": "ok", "ask": "warn", "deny": "bad", "block": "bad"}


def _review_row(run: RunTimeline, tool: ToolSpan, review: ReviewFacts) -> str:
    label = REVIEW_LABELS.get(review.kind, review.kind)
    decision = review.decision or "no decision"
    confidence = f" · confidence {review.confidence:.2f}" if review.confidence is not None else ""
    failed = " · the reviewing model failed" if review.model_result == "error" else ""
    return (
        f'<tr class="review depth-{run.depth}"><th scope="row" class="small">{label} of '
        f'<code>{esc(tool.tool_name)}</code> <span class="badge {REVIEW_TONES.get(review.decision, "plain")}">'
        f"{esc(decision)}</span>{confidence}{failed}</th><td></td>"
        f'<td class="num">{duration(review.seconds)}</td><td></td><td></td><td class="optional"></td>'
        f"{_bar(run, review.started_at, review.ended_at, 'tool')}</tr>"
    )


def _open_note(timeline: ConversationTimeline) -> str:
    if not timeline.open_runs:
        return ""
    return (
        f' · <span class="badge warn">{_plural(timeline.open_runs, "open-ended run")}</span> still running with no '
        "end recorded, clipped at the last known step"
    )


def render_timeline(timeline: ConversationTimeline, options: TimelineOptions) -> SafeString:
    if not timeline.runs:
        return mark_safe('<p class="muted">No runs stored.</p>')
    total = timeline.usage
    rows: list[str] = []
    budget = STEP_ROWS
    shown = timeline.runs
    if not options.all_runs:  # the first runs, and any asked for by id (a /r/<id>/ link lands on its row)
        shown = timeline.runs[:RUN_ROWS] + [r for r in timeline.runs[RUN_ROWS:] if r.run.run_id in options.expanded]
    for run in shown:
        needed = _step_rows(run)
        folded = needed > budget and run.run.run_id not in options.expanded
        rows.append(_run_row(timeline, run, options, folded))
        if folded:
            budget = 0  # later runs fold too, so the runs shown with steps are the first ones
            continue
        budget = max(0, budget - needed)
        for number, step in enumerate(run.steps, start=1):
            rows.append(_step_row(run, number, step))
            for tool in step.tools:
                rows.append(_tool_row(run, tool))
                rows.extend(_review_row(run, tool, review) for review in tool.reviews)
        rows.extend(_tool_row(run, tool) for tool in run.interrupted)
    hidden = len(timeline.runs) - len(shown)
    if hidden:
        rows.append(
            f'<tr class="fold"><td colspan="7"><a class="fold" href="?runs=all#timeline-totals">Show all '
            f"{len(timeline.runs):,} runs</a> ({_plural(hidden, 'more run')}; the totals above count them)</td></tr>"
        )
    summary = (
        f'<p class="small" id="timeline-totals">{len(timeline.runs)} run{"s" if len(timeline.runs) != 1 else ""} · '
        f"{timeline.step_count} model step{'s' if timeline.step_count != 1 else ''} · tokens: "
        f"<strong>{tokens(total.input)}</strong> input, <strong>{tokens(total.output)}</strong> output, "
        f"<strong>{tokens(total.cache_read)}</strong> cache read · "
        f"{span_label(timeline.started_at, timeline.axis_end)}{_open_note(timeline)}</p>"
    )
    table = (
        '<div class="table-wrap"><table class="waterfall" aria-label="Runs, steps and tool calls over time">'
        '<thead><tr><th scope="col">Run, step or tool call</th><th scope="col">Model</th>'
        '<th scope="col" class="num">Duration</th><th scope="col" class="num">Input</th>'
        '<th scope="col" class="num">Output</th><th scope="col" class="num optional">Cache read</th>'
        '<th scope="col" class="bar">Waterfall <span class="small muted">(runs on the conversation\'s time, '
        "steps on their run's)</span></th></tr></thead><tbody>"
        + "".join(rows)
        + '</tbody><tfoot><tr><th scope="row">Conversation total</th><td></td>'
        f'<td class="num">{duration(timeline.axis_seconds)}{" + open" if timeline.open_runs else ""}</td>'
        f"{_usage_cells(total)}<td></td></tr></tfoot></table></div>"
    )
    return mark_safe(summary + table)  # noqa: S308  # every stored value above went through _e
