"""Exact transcript recovery from step snapshots (SPEC section 1).

Pure: pydantic-ai messages in, plain dataclasses out; no Django, no I/O, and pydantic-ai-harness is not
needed (its two summary recognizers are re-implemented here so the product runs without it).

Every agent step saves the whole live history. Compaction rewrites that live history, so a later snapshot
can lack messages an earlier one held. Recovery walks the snapshots of a conversation in write order and
keeps one *record*: every message the agent really produced, once, in order.

How a snapshot is merged (the reference, pydantic-ai-harness's `SnapshotHistorySource`, only looks for a
suffix of the record at the *start* of the snapshot; with `preserve_first_user_message=True` every compacted
snapshot starts with the first request instead, the overlap is found to be zero and the record doubles):

1. Compaction artifacts (the summary a `SummarizingCompaction` writes, the receipt a compaction with
   `receipts=True` leaves) are split off by part and kept aside, flagged; a request pydantic-ai emptied in
   place (an orphan result it dropped) is skipped.
2. Each run keeps a *lineage*: the record positions of its logical, uncompacted history. A compacted
   snapshot looks like `kept prefix + [summary] + a tail of the lineage + new messages`. Every place a
   lineage tail occurs in the snapshot is found in one Z-function pass over the reversed hash sequences; a
   place counts when what precedes it walks the lineage's leading messages (part by part: compaction splits
   the first request, history loading merges it with the next prompt) followed only by requests compaction
   writes, and something follows it. The place accounting for most of the lineage wins; what follows it is
   appended.
3. When no tail occurs (a run whose compaction dropped all it inherited but the first request, a fork from
   an earlier point, a store whose early snapshots were pruned), the leading messages the snapshot repeats
   are skipped and the rest is appended.
4. Matched messages are replaced by the snapshot's copy: later copies carry fields stamped after the
   earlier snapshot was written.

A run's first snapshot continues the earlier lineage whose tail ends furthest into it (a run continued through
`message_history`), else the one whose beginning it shares most (a fork). Inherited messages are therefore
not counted twice, while a genuinely repeated message (the same "continue" exchange in two runs) is new
content after the tail and is kept. Those lineages are found by lookup (by their last and first messages), never
by a scan of every earlier run, so a new run costs the same in a conversation of 10 runs or 5,000. A run whose
first message it stamped itself and that walks nothing of an earlier lineage is a run of its own. Only
`complete` snapshots contribute; `interrupted` ones are for
inspection only. A pruned store yields what survives, never an error.

Messages are matched on `message_hash`, a content hash that ignores the fields pydantic-ai stamps later.

The modules, one step each: `fold` (the record, `RecoveryFold` and `recover_conversation`), `alignment` (steps 2
and 3, and the choice of the lineage a new run continues), `summary_artifacts` (step 1), `hashing` (the keys).
"""
