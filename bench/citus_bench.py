"""A benchmark database on the local Citus cluster (docs/SCALING.md, "Citus: what was run").

`--citus` on bench/search.py and bench/ingest.py: the database named by the URL is made on the coordinator and both
workers by `cluster.sh reset` (../shared/citus beside the repository, as the Makefile's CITUS_DIR finds it; the
port of the URL is the coordinator's), then migrated and distributed by `manage.py distribute_tenants` with the
cluster's default shard count. The reset drops the database on all three nodes, so only databases named
`sd_bench_*` are accepted.
"""

import io
import os
import subprocess
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
CITUS_DIRS = [ROOT.parent / "shared" / "citus", ROOT.parent.parent / "shared" / "citus"]


def cluster_script() -> Path:
    for directory in CITUS_DIRS:
        if (directory / "cluster.sh").exists():
            return directory / "cluster.sh"
    raise SystemExit(f"--citus needs ../shared/citus/cluster.sh (looked in {', '.join(map(str, CITUS_DIRS))})")


def reset_database(url: str) -> float:
    """Drop and create the database on every node of the cluster (extension created, workers registered)."""
    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    if not name.startswith("sd_bench_"):
        raise SystemExit(f"--citus drops and makes its database on every node: name it sd_bench_..., not {name!r}")
    if parts.hostname not in ("127.0.0.1", "localhost"):
        raise SystemExit("--citus runs the local cluster (cluster.sh): the URL's host must be 127.0.0.1")
    started = time.perf_counter()
    subprocess.run(
        [str(cluster_script()), "reset", name],
        check=True,
        stdout=subprocess.DEVNULL,
        env={**os.environ, "CITUS_BASE_PORT": str(parts.port or 5432)},
    )
    return time.perf_counter() - started


def alter_database(url: str, setting: str) -> None:
    """`ALTER DATABASE <db> <setting>` on the coordinator, which Citus passes on to the workers."""
    import psycopg

    name = urlsplit(url).path.lstrip("/")
    with psycopg.connect(url.replace("postgres://", "postgresql://", 1), autocommit=True) as conn:
        conn.execute(f'ALTER DATABASE "{name}" {setting}')


def worker_setting(name: str) -> list[str]:
    """A setting as each worker's new connections to this database see it."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT result FROM run_command_on_workers(%s) ORDER BY nodeport", [f"SHOW {name}"])
        return [row[0] for row in cursor.fetchall()]


def migrate_and_distribute() -> dict[str, float]:
    """After django.setup(): the schema as `manage.py migrate` and `manage.py distribute_tenants` make it."""
    from django.core.management import call_command

    started = time.perf_counter()
    call_command("migrate", verbosity=0)
    migrated = time.perf_counter()
    call_command("distribute_tenants", verbosity=0, stdout=io.StringIO())  # the reports print JSON on stdout
    return {"migrate_s": round(migrated - started, 1), "distribute_tenants_s": round(time.perf_counter() - migrated, 1)}


def cluster_facts() -> dict[str, object]:
    """The workers and the shard count the distributed tables got, for the report."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_dist_node WHERE noderole = 'primary' AND groupid <> 0")
        (workers,) = cursor.fetchone()
        cursor.execute("SELECT shard_count FROM citus_tables WHERE table_name = 'search_app_searchdocument'::regclass")
        (shards,) = cursor.fetchone()
        cursor.execute("SELECT citus_version()")
        (version,) = cursor.fetchone()
    return {"workers": workers, "shard_count": shards, "version": version}


def size_function(function: str, citus: bool) -> str:
    """On Citus the coordinator holds no rows: citus_relation_size and citus_total_relation_size sum the shards."""
    return f"citus_{function.removeprefix('pg_')}" if citus else function
