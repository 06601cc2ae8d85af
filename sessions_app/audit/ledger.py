"""What a run's tool-effect ledger says about each call. Pure.

The harness writes `started` before a tool runs and `completed` or `failed` after it; a `started` that never
ended while its run is no longer running is a call the process died inside: its side effect may exist or not,
so the destination must be queried before any retry (the INTERRUPTED TOOL guidance).
"""

OUTCOME_UNKNOWN = "outcome unknown after crash"
RUNNING = "running"  # models.RunState.RUNNING, named here so this module stays pure


def effect_outcome(status: str, ended: bool, run_state: str) -> str:
    """What a ledger entry says happened: its status, or OUTCOME_UNKNOWN for a call `started` and never ended
    while its run is no longer running (a running run's call may still end)."""
    if status == "started" and not ended and run_state != RUNNING:
        return OUTCOME_UNKNOWN
    return status
