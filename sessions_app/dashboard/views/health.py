"""GET /healthz: whether this worker can serve, which needs its database."""

import logging

from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse

logger = logging.getLogger("sessiondesk.health")


def healthz(request: HttpRequest) -> HttpResponse:
    """ "ok", or 503 (with Retry-After, added at the edge) when the database does not answer: a worker without
    its database cannot serve a page or take a write, so a load balancer should send nobody to it."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError as error:
        logger.warning("health check: database unavailable: %s", type(error).__name__)
        return HttpResponse("database unavailable", status=503, content_type="text/plain")
    return HttpResponse("ok", content_type="text/plain")
