"""Bearer API-key authentication for /api/v1/: the key alone decides the tenant, the decorator the key level."""

from collections.abc import Callable
from functools import wraps
from typing import Concatenate, cast, overload

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from input_errors import RejectedInput
from sessions_app.models import ApiKey, Tenant
from sessions_app.tenancy.api_keys import authenticate

SERVER_KEY_REQUIRED = "This endpoint needs a server API key; client keys cannot write audit records."


class ApiRequest(HttpRequest):
    """A request that passed `api_key_required`: it carried `api_key`, which belongs to `tenant`."""

    tenant: Tenant
    api_key: ApiKey


type ApiView[**P] = Callable[Concatenate[ApiRequest, P], HttpResponse]
type DjangoView[**P] = Callable[Concatenate[HttpRequest, P], HttpResponse]


def api_error(status: int, message: str, **extra: object) -> JsonResponse:
    return JsonResponse({"error": message, **extra}, status=status)


def key_actor(request: ApiRequest) -> str:
    """How the audit log names what a key did."""
    return f"api-key:{request.api_key.prefix}"


def _authenticated(request: HttpRequest, kind: str | None) -> JsonResponse | ApiRequest:
    header = request.headers.get("Authorization", "")
    scheme, _, raw_key = header.partition(" ")
    if scheme.lower() != "bearer" or not raw_key.strip():
        response = api_error(401, "Missing API key: send 'Authorization: Bearer <api key>'.")
    elif (key := authenticate(raw_key.strip())) is None:
        response = api_error(401, "Invalid or revoked API key.")
    elif kind is not None and key.kind != kind:
        return api_error(403, SERVER_KEY_REQUIRED)
    else:
        # The same object, from here on known to carry the key and its tenant.
        api_request = cast(ApiRequest, request)
        api_request.api_key = key
        api_request.tenant = key.tenant
        return api_request
    response["WWW-Authenticate"] = "Bearer"
    return response


def _authorized[**P](view: ApiView[P], kind: str | None) -> DjangoView[P]:
    @wraps(view)
    def wrapper(request: HttpRequest, /, *args: P.args, **kwargs: P.kwargs) -> HttpResponse:
        checked = _authenticated(request, kind)
        if isinstance(checked, JsonResponse):
            return checked
        try:
            return view(checked, *args, **kwargs)
        except RejectedInput as error:
            # Every refused input, whichever room refused it: JSON naming the problem, with its status.
            return api_error(error.status, error.message)

    return csrf_exempt(wrapper)


@overload
def api_key_required[**P](view: ApiView[P], /) -> DjangoView[P]: ...
@overload
def api_key_required[**P](*, kind: str) -> Callable[[ApiView[P]], DjangoView[P]]: ...
def api_key_required[**P](
    view: ApiView[P] | None = None, /, *, kind: str | None = None
) -> DjangoView[P] | Callable[[ApiView[P]], DjangoView[P]]:
    """Sets `request.tenant` and `request.api_key`; 401 for a missing, unknown or revoked key, and 403 for a key
    of another kind than `kind` (`@api_key_required(kind=Source.SERVER)`); bare, any key. A `RejectedInput` the
    view raises answers `{"error": message}` with its status."""
    if view is not None:
        return _authorized(view, None)
    return lambda inner: _authorized(inner, kind)
