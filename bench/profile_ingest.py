"""One ingest profiled at a long threaded history (issue 24): where one post's time goes, in process.

    .venv/bin/python bench/profile_ingest.py otlp|post RUNS PROFILED [--forget-folds]
        (PROF_DB=postgres://root@127.0.0.1:5432/sd_prof by default)

A real agent (tests/agents.weather_agent, four messages a run) runs RUNS times threaded through `message_history`;
every run but the last PROFILED is posted unprofiled (OTLP: the run's spans as one protobuf export to /v1/traces;
post: the whole history as POST /api/v1/snapshots), through Django's test client; the last PROFILED posts run under
pyinstrument (`pip install pyinstrument`; not a project dependency). `--forget-folds` forgets the kept recovery
folds before each profiled post, as when another gunicorn worker wrote the conversation last. `--alternate` keeps
two processes' folds and takes them in turns, post by post, as two gunicorn workers taking a client's exports in
turns do (each post then catches up the other's last write).
"""

import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from ingest import setup  # noqa: E402  (bench/ingest.py: creates the database, migrates)


def main() -> None:
    mode, runs, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    forget = "--forget-folds" in sys.argv
    alternate = "--alternate" in sys.argv
    setup(os.environ.get("PROF_DB", "postgres://root@127.0.0.1:5432/sd_prof"))
    import otlp as otlp_bench
    from django.test import Client
    from pydantic_ai.messages import ModelMessagesTypeAdapter
    from pyinstrument import Profiler

    from sessions_app.models import Tenant
    from sessions_app.tenancy.api_keys import create_api_key
    from sessions_app.transcripts import fold_cache
    from tests.agents import weather_agent

    tenant = Tenant.objects.create(slug=f"prof-{time.time_ns()}", name="profile")
    _, key = create_api_key(tenant, "server")
    client = Client()
    bodies: list[bytes] = []
    if mode == "otlp":
        bodies, _ = otlp_bench.record(runs)
        path, content_type, status = "/v1/traces", "application/x-protobuf", 200
    else:
        agent, history = weather_agent(), None
        for n in range(runs):
            history = agent.run_sync(f"Weather, question {n}?", message_history=history).all_messages()
            messages = ModelMessagesTypeAdapter.dump_python(history, mode="json")
            body = {"conversation_id": "c", "run_id": f"r{n}", "step": 1, "state": "complete", "messages": messages}
            bodies.append(json.dumps(body).encode())
        path, content_type, status = "/api/v1/snapshots", "application/json", 201

    folds_of_workers = [fold_cache._kept, type(fold_cache._kept)()]

    def post(i: int) -> float:
        if alternate:
            fold_cache._kept = folds_of_workers[i % 2]
        began = time.perf_counter()
        response = client.post(path, data=bodies[i], content_type=content_type, HTTP_AUTHORIZATION=f"Bearer {key}")
        assert response.status_code == status, response.content
        return (time.perf_counter() - began) * 1000

    times = [post(i) for i in range(runs - last)]
    profiler = Profiler(interval=0.0005)
    profiled = []
    for i in range(runs - last, runs):
        if forget:
            fold_cache.forget_all()
        profiler.start()
        profiled.append(post(i))
        profiler.stop()
    print("first", [round(t) for t in times[:5]], "last unprofiled", [round(t) for t in times[-5:]])
    print("profiled", [round(t) for t in profiled], "load", os.getloadavg())
    print(profiler.output_text(unicode=False, color=False))


if __name__ == "__main__":
    main()
