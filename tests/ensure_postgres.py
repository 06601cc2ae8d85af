"""Exit 0 when the PostgreSQL server of DATABASE_URL answers (creating the named database if missing), else 1.

`make test-postgres` runs this first, so a missing server is a skip locally and a failure under CI=true.
"""

import sys
from urllib.parse import urlparse

import psycopg
from psycopg import sql


def main(url: str) -> int:
    parsed = urlparse(url)
    name = parsed.path.lstrip("/")
    maintenance = parsed._replace(scheme="postgresql", path="/postgres").geturl()
    try:
        with psycopg.connect(maintenance, connect_timeout=3, autocommit=True) as conn:
            if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    except psycopg.Error as error:
        print(f"PostgreSQL at {url} is not usable: {error}".strip(), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
