"""The body of an API request, read once for JSON and OTLP alike: at most SESSIONDESK_MAX_PAYLOAD_BYTES (413), whether
declared or sent. JSON bodies are then JSON in UTF-8 only (415 otherwise) and go through the pure decoder
(`sessions_app.core.api_input.decode_json`: bounded depth, no NUL or lone surrogates, 400 naming the problem)."""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest

from input_errors import RejectedInput
from sessions_app.core.api_input import decode_json

JSON_ONLY = "Send JSON: 'Content-Type: application/json' (UTF-8)."


def too_large() -> RejectedInput:
    limit = settings.SESSIONDESK_MAX_PAYLOAD_BYTES
    return RejectedInput(f"Payload is larger than the limit of {limit} bytes.", status=413)


def declared_length(request: HttpRequest) -> int:
    try:
        return max(int(request.headers.get("Content-Length") or 0), 0)
    except ValueError:
        return 0


def read_body(request: HttpRequest) -> bytes:
    """The raw body, or a 413 `RejectedInput` when it is declared or turns out larger than the limit."""
    limit = settings.SESSIONDESK_MAX_PAYLOAD_BYTES
    if declared_length(request) > limit:
        raise too_large()
    try:
        body = request.body
    except RequestDataTooBig:
        raise too_large() from None
    if len(body) > limit:
        raise too_large()
    return body


def json_body(request: HttpRequest) -> object:
    # (A body declared too large never gets here: the edge middleware answers 413 first, whatever its type.)
    # A body without a Content-Type is read as JSON (and decoded as strictly); WSGI servers built on wsgiref
    # (runserver) report an absent header as text/plain, so that one counts as absent. Any other type is refused.
    if request.content_type not in ("application/json", "", "text/plain"):
        raise RejectedInput(JSON_ONLY, status=415)
    charset = (request.content_params or {}).get("charset", "utf-8").lower()
    if charset not in ("utf-8", "utf8"):
        raise RejectedInput(JSON_ONLY, status=415)
    return decode_json(read_body(request))
