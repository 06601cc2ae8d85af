"""Bearer API-key authentication for /api/v1/: the key alone decides the tenant."""

from collections.abc import Callable
from functools import wraps
from typing import Concatenate, cast

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from sessions_app.core.input_errors import RejectedInput
from sessions_app.models import ApiKey, Tenant
from sessions_app.tenancy.api_keys import authenticate


class ApiRequest(HttpRequest):
    """A request that passed `api_key_required`: it carried `api_key`, which belongs to `tenant`."""

    tenant: Tenant
    api_key: ApiKey


type ApiView[**P] = Callable[Concatenate[ApiRequest, P], HttpResponse]


def api_error(status: int, message: str, **extra: object) -> JsonResponse:
    return JsonResponse({"error": message, **extra}, status=status)


def api_key_required[**P](view: ApiView[P]) -> Callable[Concatenate[HttpRequest, P], HttpResponse]:
    """Sets `request.tenant` and `request.api_key`; 401 for a missing, unknown or revoked key."""

    @csrf_exempt
    @wraps(view)
    def wrapper(request: HttpRequest, *args: P.args, **kwargs: P.kwargs) -> HttpResponse:
        header = request.headers.get("Authorization", "")
        scheme, _, raw_key = header.partition(" ")
        if scheme.lower() != "bearer" or not raw_key.strip():
            response = api_error(401, "Missing API key: send 'Authorization: Bearer <api key>'.")
        elif (key := authenticate(raw_key.strip())) is None:
            response = api_error(401, "Invalid or revoked API key.")
        else:
            # The same object, from here on known to carry the key and its tenant.
            api_request = cast(ApiRequest, request)
            api_request.api_key = key
            api_request.tenant = key.tenant
            try:
                return view(api_request, *args, **kwargs)
            except RejectedInput as error:
                # Every refused input, whichever room refused it: JSON naming the problem, with its status.
                return api_error(error.status, error.message)
        response["WWW-Authenticate"] = "Bearer"
        return response

    return wrapper
