"""HTML for transcript messages, built in Python from esc pieces. Pure: MessageView in, markup out.

Why not a template: the Django template engine costs about a millisecond per message here, so a 2,000-message
transcript took seconds; this renderer does the same markup in tens of microseconds per message. Every piece
of message text goes through `escape` (never trusted as markup); everything else is our own constant markup.
The page around the messages stays a template (conversation.html), which includes this output.
"""

import functools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from html import escape

from django.utils.safestring import SafeString, mark_safe

from sessions_app.dashboard.markup import esc
from sessions_app.transcripts.transcript_layout import MessageView, PartView

_BADGE_RECOVERED = (
    '<span class="badge info note" title="Compaction removed this from the live history; recovered from an earlier '
    'snapshot">recovered from compaction</span>'
)
_NO_RESULT = (
    '<div class="repair"><span class="label"><strong>No result recorded</strong></span><p class="small">'
    'pydantic-ai\'s history repair would synthesize an "interrupted" return here before the next request. '
    "That does not prove the tool never ran: check the destination before retrying.</p></div>"
)


@dataclass(frozen=True)
class UnrecordedMark:
    """An interrupted call only a snapshot holds, shown where the repair would insert its "interrupted" return."""

    anchor: str
    run_id: str
    tool_name: str
    detail: str
    snapshot_url: str = ""  # for members who may open snapshots
    audit_url: str = ""


@dataclass(frozen=True)
class CompactionMark:
    """A compaction of the live history (a `compact_messages` span from OTLP), shown where it happened."""

    anchor: str
    run_id: str
    strategy: str
    messages_before: int | None
    messages_after: int | None
    tokens_before: int | None
    tokens_after: int | None


@dataclass(frozen=True)
class RenderOptions:
    conversation_pk: int
    highlighted: int | None = None  # the message a search hit points at
    revealed: int | None = None  # shown unmasked after an audited reveal
    reveal_csrf_token: str | None = None  # set only for members who may reveal
    reveal_url: str = ""  # the reveal URL with "{position}" where the message position goes
    # Marks shown after the message at their position (the key), for calls the transcript does not hold.
    unrecorded: Mapping[int, Sequence[UnrecordedMark]] = field(default_factory=dict)
    # Compactions shown after the message at their position (-1: before the first message).
    compactions: Mapping[int, Sequence[CompactionMark]] = field(default_factory=dict)


@functools.lru_cache(maxsize=4096)
def _e_repeated(text: str) -> str:
    # Roles, role labels and run ids repeat on every message of a run: esc once, not once per message.
    return escape(text, quote=True)


def _time(value: datetime | None) -> str:
    if value is None:
        return ""
    # An ISO time holds digits, '-', ':', '.', '+' and 'T' only: nothing to escape. Its first 19 characters are
    # the shown "YYYY-MM-DD HH:MM:SS", without strftime's cost on every message.
    iso = value.isoformat()
    return f'<time datetime="{iso}">{iso[:10]} {iso[11:19]}</time>'


# JSON shown open up to this many lines; a longer one starts folded (its summary says how long it is).
JSON_OPEN_LINES = 12
_FENCE = re.compile(r"^```[^\n`]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def prose(text: str) -> str:
    """Message text in the body font, with fenced code blocks (```) in monospace."""
    pieces: list[str] = []
    at = 0
    for fence in _FENCE.finditer(text):
        if before := text[at : fence.start()].strip("\n"):
            pieces.append(f'<p class="prose">{esc(before)}</p>')
        pieces.append(f'<pre class="code"><code>{esc(fence.group(1).rstrip(chr(10)))}</code></pre>')
        at = fence.end()
    if rest := text[at:].strip("\n") if pieces else text:
        pieces.append(f'<p class="prose">{esc(rest)}</p>')
    return "".join(pieces) or '<p class="prose"></p>'


def json_block(text: str, what: str) -> str:
    """Tool arguments or a result: JSON pretty-printed in monospace, in a block that folds (closed when long);
    other text as prose."""
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            value = json.loads(stripped)
        except ValueError:
            value = None
        if isinstance(value, dict | list):
            pretty = json.dumps(value, indent=2, ensure_ascii=False)
            lines = pretty.count("\n") + 1
            size = (
                f"{len(value)} key{'' if len(value) == 1 else 's'}"
                if isinstance(value, dict)
                else (f"{len(value)} item{'' if len(value) == 1 else 's'}")
            )
            opened = " open" if lines <= JSON_OPEN_LINES else ""
            return (
                f'<details class="json"{opened}><summary>{what} · JSON, {size}, {lines} lines</summary>'
                f"<pre>{esc(pretty)}</pre></details>"
            )
    return prose(text)


def _short(text: str, length: int) -> str:
    return text if len(text) <= length else text[: length - 1] + "…"


def _part(part: PartView, message: MessageView) -> str:
    if part.kind == "tool_call":
        call_class = ' class="repair"' if part.dangling else ""
        call = (
            f'<div{call_class}><span class="label">Tool call <code>{esc(part.tool_name)}</code></span>'
            f"{json_block(part.text, 'arguments')}</div>"
        )
        if part.result is None:
            return f'<div class="toolpair">{call}{_NO_RESULT}</div>'
        result = part.result
        link = ""
        if result.position != message.position:
            link = f' · <a href="#m-{result.position}">#{result.position}</a>'
        note = ""
        result_class = ""
        if result.synthesized:
            result_class = ' class="repair"'
            note = ' · <strong>repair: synthesized "interrupted" return</strong> (the tool may or may not have run)'
        return (
            f'<div class="toolpair">{call}<div{result_class}><span class="label">Result{link}{note}</span>'
            f"{json_block(result.text, 'result')}</div></div>"
        )
    if part.kind == "tool_result":
        if part.orphan:
            return (
                '<div class="part toolpair"><div class="repair"><span class="label"><strong>Repair: orphan '
                f"result</strong> of <code>{esc(part.tool_name)}</code> (no matching call in this history; "
                f"pydantic-ai drops it before the next request)</span><pre>{esc(part.text)}</pre></div></div>"
            )
        if part.paired_with is None:
            return (
                f'<div class="part"><span class="small muted">Result of <code>{esc(part.tool_name)}</code></span>'
                f"{json_block(part.text, 'result')}</div>"
            )
        return (
            f'<p class="small muted note">Result of <code>{esc(part.tool_name)}</code> shown beside its call at '
            f'<a href="#m-{part.paired_with}">#{part.paired_with}</a>.</p>'
        )
    if part.kind == "reasoning":
        return (
            '<details class="part"><summary class="small muted">Reasoning</summary>'
            f"<pre>{esc(part.text)}</pre></details>"
        )
    if part.kind == "media":
        return f'<p class="part small muted">{esc(part.text)}</p>'
    label = f'<span class="small muted">{esc(part.role.capitalize())}</span>' if part.role != message.role else ""
    return f'<div class="part">{label}{prose(part.text)}</div>'


def _summary_artifact(message: MessageView) -> str:
    body = "".join(f"<pre>{esc(part.text)}</pre>" for part in message.parts)
    return (
        f'<details class="summary-artifact" id="summary-{message.position}"><summary>Summary written by '
        "compaction (not part of the transcript; replaced earlier messages in the live history)</summary>"
        f"{body}</details>"
    )


def render_message(message: MessageView, options: RenderOptions) -> str:
    if message.summary_artifact:
        return _summary_artifact(message)
    p = message.position
    classes = f"msg {_e_repeated(message.role)}"
    if p == options.highlighted:
        classes += " hit"
    if message.only_paired_results:
        classes += " folded note"
    if message.recovered_from_compaction:
        classes += " recovered"
    role_label = _e_repeated(message.role_label)
    head = [f'<span class="role">{role_label}</span>', f"<span>#{p}</span>"]
    if message.timestamp:
        head.append(_time(message.timestamp))
    run_id = message.run_id
    head.append(f'<span class="mono" title="{_e_repeated(run_id)}">{_e_repeated(_short(run_id, 16))}</span>')
    if message.recovered_from_compaction:
        head.append(_BADGE_RECOVERED)
    head.extend('<span class="badge bad">repair</span>' for _ in message.repairs)
    if options.revealed == p:
        head.append('<span class="badge warn">masked text revealed (audited)</span>')
    head.append(f'<a class="permalink" href="#m-{p}" aria-label="Permalink to message {p}">#</a>')
    if not message.parts:
        body = '<p class="small muted">(empty message: it has no parts)</p>'
    elif message.only_paired_results:
        links = "".join(f' (<a href="#m-{part.paired_with}">#{part.paired_with}</a>)' for part in message.parts)
        plural = "s" if len(message.parts) > 1 else ""
        calls = "their calls" if plural else "its call"
        body = f'<p class="small muted">Tool result{plural} shown beside {calls}{links}.</p>'
    else:
        body = "".join(_part(part, message) for part in message.parts)
    reveal = ""
    if options.reveal_csrf_token and message.masked and not message.only_paired_results and options.revealed != p:
        action = esc(options.reveal_url.replace("{position}", str(p)))
        reveal = (
            f'<form method="post" action="{action}" class="small" hx-post="{action}" hx-target="#m-{p}" '
            f'hx-swap="outerHTML"><input type="hidden" name="csrfmiddlewaretoken" '
            f'value="{esc(options.reveal_csrf_token)}"><button type="submit" class="secondary small" '
            'title="Shows this message unmasked and records an audit event">Reveal masked text</button></form>'
        )
    return (
        f'<article class="{classes}" id="m-{p}" data-nav-item tabindex="-1" aria-label="Message {p}, '
        f'{role_label}"><div class="msg-head">{"".join(head)}</div>{body}{reveal}</article>'
    )


def render_unrecorded(mark: UnrecordedMark) -> str:
    links = [
        f'<a href="{esc(url)}">{label}</a>'
        for url, label in ((mark.snapshot_url, "the interrupted snapshot"), (mark.audit_url, "the run's audit"))
        if url
    ]
    return (
        f'<aside class="msg repair-mark" id="{esc(mark.anchor)}" data-nav-item tabindex="-1" '
        f'aria-label="Interrupted call of {esc(mark.tool_name)}"><div class="msg-head"><span class="role">Interrupted '
        f'tool call</span><span class="badge bad">repair</span><span class="mono" title="{esc(mark.run_id)}">'
        f'{esc(_short(mark.run_id, 16))}</span><a class="permalink" href="#{esc(mark.anchor)}" '
        f'aria-label="Permalink to this interrupted call">#</a></div><div class="toolpair"><div class="repair">'
        f'<span class="label">Tool call <code>{esc(mark.tool_name)}</code> · <strong>repair: synthesized '
        '"interrupted" return</strong></span><p class="small">The run stopped after this call and before its result; '
        "only an interrupted snapshot holds the call, so the recovered transcript does not. pydantic-ai's repair "
        f'inserts an "interrupted" return here before the next request.</p><p class="small">{esc(mark.detail)}</p>'
        + (f'<p class="small">See {" · ".join(links)}.</p>' if links else "")
        + "</div></div></aside>"
    )


def _change(before: int | None, after: int | None, unit: str, approximate: str = "") -> str:
    if before is None or after is None:
        return ""
    return f" · {unit} {approximate}{before:,} → {approximate}{after:,}"


def render_compaction(mark: CompactionMark) -> str:
    counts = _change(mark.messages_before, mark.messages_after, "messages") + _change(
        mark.tokens_before, mark.tokens_after, "tokens", "~"
    )
    return (
        f'<aside class="compaction-mark note" id="{esc(mark.anchor)}" aria-label="Compaction boundary">'
        f'<span class="badge info">compaction</span> <strong>{esc(mark.strategy or "unnamed strategy")}</strong>'
        f'{counts} <span class="mono small" title="{esc(mark.run_id)}">{esc(_short(mark.run_id, 16))}</span>'
        '<span class="small muted"> · the live history was compacted here; the messages above it that it dropped '
        "are marked recovered from compaction</span></aside>"
    )


def render_messages(messages: list[MessageView], options: RenderOptions) -> SafeString:
    """The messages as one block of HTML; safe because every message-derived piece was esc above."""
    pieces: list[str] = []
    if messages and messages[0].position == 0:
        pieces.extend(render_compaction(mark) for mark in options.compactions.get(-1, ()))
    for message in messages:
        pieces.append(render_message(message, options))
        if not message.summary_artifact:
            pieces.extend(render_unrecorded(mark) for mark in options.unrecorded.get(message.position, ()))
            pieces.extend(render_compaction(mark) for mark in options.compactions.get(message.position, ()))
    return mark_safe("\n".join(pieces))  # noqa: S308
