"""The JSON body of an API request: JSON and UTF-8 only (415 otherwise), the size cap (413), then the pure decoder
(`sessions_app.core.api_input.decode_json`: bounded depth, no NUL or lone surrogates, 400 naming the problem)."""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest

from sessions_app.core.api_input import decode_json
from sessions_app.core.input_errors import RejectedInput

JSON_ONLY = "Send JSON: 'Content-Type: application/json' (UTF-8)."


def too_large() -> RejectedInput:
    limit = settings.SESSIONDESK_MAX_PAYLOAD_BYTES
    return RejectedInput(f"Payload is larger than the limit of {limit} bytes.", status=413)


def declared_length(request: HttpRequest) -> int:
    try:
        return max(int(request.headers.get("Content-Length") or 0), 0)
    except ValueError:
        return 0


def json_body(request: HttpRequest) -> object:
    if declared_length(request) > settings.SESSIONDESK_MAX_PAYLOAD_BYTES:
        raise too_large()
    # A body without a Content-Type is read as JSON (and decoded as strictly); WSGI servers built on wsgiref
    # (runserver) report an absent header as text/plain, so that one counts as absent. Any other type is refused.
    if request.content_type not in ("application/json", "", "text/plain"):
        raise RejectedInput(JSON_ONLY, status=415)
    charset = (request.content_params or {}).get("charset", "utf-8").lower()
    if charset not in ("utf-8", "utf8"):
        raise RejectedInput(JSON_ONLY, status=415)
    try:
        body = request.body
    except RequestDataTooBig:
        raise too_large() from None
    if len(body) > settings.SESSIONDESK_MAX_PAYLOAD_BYTES:
        raise too_large()
    return decode_json(body)
