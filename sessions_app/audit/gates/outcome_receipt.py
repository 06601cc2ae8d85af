"""Gate 6, outcome receipt: an outcome receipt for every effect, a live wait first, else stuck or missing. Pure."""

from collections.abc import Sequence
from datetime import UTC

from pydantic_ai.messages import ModelMessage, ModelResponse

from sessions_app.audit.gates.context import OUTCOME_RECEIPT, AuditContext, Finding, WaitFact
from sessions_app.audit.vocabulary import Evidence, Verdict

LEVELS: tuple[Evidence, ...] = tuple(Evidence)  # weakest first


def _unproven_effects(ctx: AuditContext) -> str | None:
    """What the receipts fail to prove, or None when every effect they name has outcome evidence."""
    best: dict[str, int] = {}
    for receipt in ctx.receipts:
        level = LEVELS.index(Evidence(receipt.evidence))
        best[receipt.effect] = max(best.get(receipt.effect, -1), level)
    outcome = LEVELS.index(Evidence.OUTCOME)
    unproven = sorted(effect for effect, level in best.items() if level < outcome)
    if best and not unproven:
        return None
    if unproven:
        return "; ".join(f"'{e}' has only {LEVELS[best[e]]} evidence" for e in unproven)
    return "There is no receipt for this run"


def _about_wait(code: Verdict, wait: WaitFact, what: str) -> list[Finding]:
    """The one finding of a run a wait decides, WAITING or STUCK: keyed by the wait's deadline, so a new wait is a
    new finding."""
    key = f"{code.value.lower()}:{wait.deadline.isoformat()}"  # the stored identity: unchanged by how it reads
    # Said as every page says a time (B14: the finding read "2026-12-05T04:06:47.006791+00:00").
    deadline = wait.deadline.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    if code is Verdict.WAITING:
        detail = f"{what}, but the run is waiting for {wait.owner} to decide: {wait.decision} (deadline {deadline})."
    else:
        detail = (
            f"{what}, and the wait for {wait.owner} ({wait.decision}) passed its deadline {deadline} with no outcome."
        )
    return [Finding(gate=OUTCOME_RECEIPT, code=code, key=key, detail=detail)]


def _idle(ctx: AuditContext) -> Finding:
    """STUCK for a run still running with no snapshot for the tenant's limit: keyed by when it went quiet."""
    assert ctx.idle_since is not None  # noqa: S101 - the caller checked
    since = ctx.idle_since.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    hours = ctx.stuck_after.total_seconds() / 3600
    return Finding(
        gate=OUTCOME_RECEIPT,
        code=Verdict.STUCK,
        key=f"stuck_idle:{ctx.idle_since.isoformat()}",
        detail=(
            f"The run is still running but sent no snapshot since {since} (more than {hours:g} h): "
            "it is stuck, not working."
        ),
    )


def check_outcome_receipt(messages: Sequence[ModelMessage], ctx: AuditContext) -> list[Finding]:
    """Gate 6: an outcome receipt for every effect the run claims; a live wait first; else stuck or missing.

    An unresolved wait whose deadline is ahead makes the run WAITING whether or not its history holds a model
    response (or receipts): a person's decision is pending, and resuming now would go past that person. Past
    its deadline the run is STUCK, unless outcome receipts prove every effect. A run still running with no
    snapshot for the tenant's limit (`ctx.stuck_after`) and no live wait is STUCK too.
    """
    return outcome_findings(any(isinstance(m, ModelResponse) for m in messages), ctx)


def outcome_findings(responded: bool, ctx: AuditContext) -> list[Finding]:
    """Gate 6 from whether the history holds a model response."""
    open_waits = [w for w in ctx.waits if not w.resolved]
    live = [w for w in open_waits if w.deadline > ctx.now]
    gap = _unproven_effects(ctx)
    if not responded and gap is not None:
        what = "The history holds no model response yet"
    else:
        what = gap or "Every effect has an outcome receipt"
    if live:
        return _about_wait(Verdict.WAITING, min(live, key=lambda w: w.deadline), what)
    if ctx.idle_since is not None and ctx.now - ctx.idle_since >= ctx.stuck_after:
        return [_idle(ctx)]
    if gap is None or (not responded and not open_waits):
        return []  # proven, or nothing was produced yet and nobody is waiting: no effect to prove
    if open_waits:
        return _about_wait(Verdict.STUCK, max(open_waits, key=lambda w: w.deadline), what)
    return [
        Finding(
            gate=OUTCOME_RECEIPT,
            code=Verdict.MISSING_OUTCOME_RECEIPT,
            key="missing_receipt",
            detail=f"{gap}: nothing proves the intended effect exists.",
        )
    ]
