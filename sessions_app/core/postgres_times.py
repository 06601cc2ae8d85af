"""Aware times go to PostgreSQL in UTC.

RFC 3339 and Python take UTC offsets up to ±23:59; PostgreSQL only up to ±15:59, and refuses the rest with a
DataError (a 500). A `timestamptz` keeps the instant, not the offset, so sending every aware time in UTC loses
nothing and covers every path at once: a message's own timestamp, a span's, a bound in raw SQL.
"""

from datetime import UTC, datetime
from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper
from psycopg.types.datetime import DatetimeBinaryDumper, DatetimeDumper


class UtcDatetimeDumper(DatetimeDumper):
    def dump(self, obj: datetime) -> Any:
        return super().dump(obj.astimezone(UTC))


class UtcDatetimeBinaryDumper(DatetimeBinaryDumper):
    def dump(self, obj: datetime) -> Any:
        return super().dump(obj.astimezone(UTC))


def send_times_in_utc(sender: object, connection: BaseDatabaseWrapper, **kwargs: object) -> None:
    """`connection_created` receiver: this connection's aware datetimes are dumped in UTC."""
    if connection.vendor != "postgresql":
        return
    adapters = connection.connection.adapters
    adapters.register_dumper(datetime, UtcDatetimeDumper)
    adapters.register_dumper(datetime, UtcDatetimeBinaryDumper)
