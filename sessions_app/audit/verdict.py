"""One verdict from all findings: the first failing gate in a fixed priority. Pure.

The order is SPEC section 3's: there is no value in diagnosing a missing deliverable in a history the caller
was never allowed to resume, so authority comes first and the outcome receipt last.
"""

from collections.abc import Iterable

UNTRUSTED_HISTORY = "UNTRUSTED HISTORY"
SCOPE_DRIFT = "SCOPE DRIFT"
ROUND_TRIP_MISMATCH = "ROUND TRIP MISMATCH"
SYSTEM_PROMPT_GAP = "SYSTEM PROMPT GAP"
INTERRUPTED_TOOL = "INTERRUPTED TOOL"
ORPHAN_RESULT_REMOVED = "ORPHAN RESULT REMOVED"
WAITING = "WAITING"
STUCK = "STUCK"
MISSING_OUTCOME_RECEIPT = "MISSING OUTCOME RECEIPT"
READY = "READY"

# WAITING, STUCK and MISSING OUTCOME RECEIPT are the three answers of the last gate; only one of them can
# appear for a run, so their relative order never decides anything.
PRIORITY: tuple[str, ...] = (
    UNTRUSTED_HISTORY,
    SCOPE_DRIFT,
    ROUND_TRIP_MISMATCH,
    SYSTEM_PROMPT_GAP,
    INTERRUPTED_TOOL,
    ORPHAN_RESULT_REMOVED,
    WAITING,
    STUCK,
    MISSING_OUTCOME_RECEIPT,
)

ALL_VERDICTS: tuple[str, ...] = (*PRIORITY, READY)


def decide_verdict(codes: Iterable[str]) -> str:
    """The highest-priority code present, or READY when there is none."""
    present = set(codes)
    unknown = present - set(PRIORITY)
    if unknown:
        raise ValueError(f"Unknown finding code(s): {', '.join(sorted(unknown))}")
    return next((code for code in PRIORITY if code in present), READY)


def verdict_rank(verdict: str) -> int:
    """Sort key: graver verdicts first, READY last."""
    return ALL_VERDICTS.index(verdict)
