"""Where a threaded run's ingest grows with its history (issue 24): each named step's time, in process, averaged
over 20 runs early in a thread (history 20 to 100 messages) and 20 runs at its end (about 1,000), and the difference.

    PROF_DB=postgres://root@127.0.0.1:5432/sd_growth .venv/bin/python bench/ingest_growth.py otlp|batch|post [RUNS]

A real agent (tests/agents.weather_agent, four messages a run) runs RUNS times (260 by default) threaded through
`message_history`; each run is posted through Django's test client as production's view takes it: OTLP, the run's
spans as one protobuf export to /v1/traces; post, the whole history as POST /api/v1/snapshots. `batch` is
BatchSpanProcessor's shape as bench/otlp_http.py sends it: four conversations side by side, one export per round
(four runs), taken in turns by two simulated workers (each export finds the process state, the kept folds and
memos, of the worker that took the export before last), and a step's time is per export. Each step is timed by a
wrapper (wall clock, so compare within one run at one load); a step absent from the code is left out.
"""

import functools
import importlib
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from ingest import setup  # noqa: E402  (bench/ingest.py: creates the database, migrates)

STEPS = [
    ("sessions_app.api.snapshots", "post_snapshot"),
    ("sessions_app.api.body", "json_body"),
    ("sessions_app.ingest.payloads", "parse_snapshot"),
    ("sessions_app.ingest.traces", "ingest_export"),
    ("sessions_app.ingest.traces", "_pending_spans"),
    ("sessions_app.ingest.otlp", "decode_spans"),
    ("sessions_app.ingest.traces", "_stored_transcripts"),
    ("sessions_app.ingest.otlp", "KnownMessages.inherit_traced"),
    ("sessions_app.ingest.otlp", "snapshot_of_run"),
    ("sessions_app.ingest.service", "ingest_snapshots"),
    ("sessions_app.ingest.service", "_locked_runs"),
    ("sessions_app.ingest.service", "_store_messages"),
    ("sessions_app.ingest.service", "_store_snapshots"),
    ("sessions_app.ingest.service", "_named_by_newest"),
    ("sessions_app.ingest.service", "_insert_references"),
    ("sessions_app.ingest.service", "_recover"),
    ("sessions_app.transcripts.store", "_catch_up"),
    ("sessions_app.transcripts.store", "rebuild_transcript"),
    ("sessions_app.transcripts.recovery.fold", "RecoveryFold.apply"),
    ("sessions_app.ingest.service", "_audit"),
    ("sessions_app.ingest.service", "_answers"),
    ("sessions_app.audit.gates", "run_gates"),
]
SAMPLES = 20


def timed(steps: list[tuple[str, str]], spent: dict[tuple[str, str], float], phase: list[str]) -> list[str]:
    """Wraps each step (and the names other modules imported it under); returns the steps found."""
    found = []
    for module_name, name in steps:
        module = importlib.import_module(module_name)
        owner: Any = module
        attribute = name
        if "." in name:
            owner, attribute = getattr(module, name.split(".")[0], None), name.split(".")[1]
        original = getattr(owner, attribute, None)
        if original is None:
            continue

        def wrapper(*args: Any, _original: Any = original, _name: str = name, **kwargs: Any) -> Any:
            began = time.perf_counter()
            try:
                return _original(*args, **kwargs)
            finally:
                spent[(phase[0], _name)] += time.perf_counter() - began

        functools.update_wrapper(wrapper, original)
        setattr(owner, attribute, wrapper)
        for other in list(sys.modules.values()):
            if "." not in name and getattr(other, "__name__", "").startswith("sessions_app"):
                if getattr(other, attribute, None) is original:
                    setattr(other, attribute, wrapper)
        found.append(name)
    return found


def record_batch(runs: int, width: int = 4) -> list[bytes]:
    """Each round's spans of `width` conversations threading side by side, as one protobuf export."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.models.instrumented import InstrumentationSettings

    from tests.agents import weather_agent

    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    instrumentation = Instrumentation(settings=InstrumentationSettings(tracer_provider=provider))
    agent = weather_agent()
    histories: dict[str, Any] = {f"lane-{lane}": None for lane in range(width)}
    bodies = []
    for n in range(runs):
        for name in histories:
            histories[name] = agent.run_sync(
                f"Weather, question {n}?", message_history=histories[name], conversation_id=name,
                capabilities=[instrumentation],
            ).all_messages()  # fmt: skip
        bodies.append(encode_spans(memory.get_finished_spans()).SerializeToString())
        memory.clear()
    return bodies


class TwoWorkers:
    """The state a web worker keeps between requests, swapped so that requests alternate between two of them."""

    def __init__(self) -> None:
        from sessions_app.audit.summaries import SUMMARIES
        from sessions_app.ingest import otlp, traces
        from sessions_app.ingest.message_memo import MEMO
        from sessions_app.transcripts import fold_cache

        self.objects = [SUMMARIES, otlp.READ_HISTORIES, MEMO]
        self.dicts = [fold_cache._kept, traces._CACHE]
        self.other: tuple[list[dict[str, Any]], list[dict[Any, Any]]] = (
            [vars(type(o)()) for o in self.objects],
            [{} for _ in self.dicts],
        )

    def swap(self) -> None:
        mine = ([o.__dict__ for o in self.objects], [dict(d) for d in self.dicts])
        for target, saved in zip(self.objects, self.other[0], strict=True):
            target.__dict__ = saved
        for table, kept in zip(self.dicts, self.other[1], strict=True):
            table.clear()
            table.update(kept)
        self.other = mine


def main() -> None:
    mode, runs = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 260
    setup(os.environ.get("PROF_DB", "postgres://root@127.0.0.1:5432/sd_growth"))
    from django.test import Client
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    from sessions_app.models import Tenant
    from sessions_app.tenancy.api_keys import create_api_key
    from tests.agents import weather_agent

    spent: dict[tuple[str, str], float] = defaultdict(float)
    phase = ["warm"]
    found = timed(STEPS, spent, phase)
    tenant = Tenant.objects.create(slug=f"growth-{time.time_ns()}", name="growth")
    _, key = create_api_key(tenant, "server")
    if mode == "otlp":
        import otlp as otlp_bench

        bodies, _ = otlp_bench.record(runs)
        path, content_type = "/v1/traces", "application/x-protobuf"
    elif mode == "batch":
        bodies, path, content_type = record_batch(runs), "/v1/traces", "application/x-protobuf"
        workers = TwoWorkers()
    else:
        agent, history, bodies = weather_agent(), None, []
        for n in range(runs):
            history = agent.run_sync(f"Weather, question {n}?", message_history=history).all_messages()
            messages = ModelMessagesTypeAdapter.dump_python(history, mode="json")
            body = {"conversation_id": "c", "run_id": f"r{n}", "step": 1, "state": "complete", "messages": messages}
            bodies.append(json.dumps(body).encode())
        path, content_type = "/api/v1/snapshots", "application/json"
    client = Client()
    for i, body in enumerate(bodies):
        phase[0] = "early" if 5 <= i < 5 + SAMPLES else "late" if i >= len(bodies) - SAMPLES else "warm"
        if mode == "batch":
            workers.swap()
        response = client.post(path, data=body, content_type=content_type, HTTP_AUTHORIZATION=f"Bearer {key}")
        assert response.status_code in (200, 201), response.content
    print(f"{mode}, {runs} runs, load {os.getloadavg()}, mean ms over {SAMPLES} runs each")
    for name in found:
        early, late = (spent[(p, name)] / SAMPLES * 1000 for p in ("early", "late"))
        if early or late:
            print(f"{name:32s} early {early:7.2f}  late {late:7.2f}  growth {late - early:7.2f}")


if __name__ == "__main__":
    main()
