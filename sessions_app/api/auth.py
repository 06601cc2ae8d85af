"""Bearer API-key authentication for /api/v1/: the key alone decides the tenant."""

from collections.abc import Callable
from functools import wraps

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from sessions_app.tenancy.api_keys import authenticate


def api_error(status: int, message: str, **extra: object) -> JsonResponse:
    return JsonResponse({"error": message, **extra}, status=status)


def api_key_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Sets `request.tenant` and `request.api_key`; 401 for a missing, unknown or revoked key."""

    @csrf_exempt
    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        header = request.headers.get("Authorization", "")
        scheme, _, raw_key = header.partition(" ")
        if scheme.lower() != "bearer" or not raw_key.strip():
            response = api_error(401, "Missing API key: send 'Authorization: Bearer <api key>'.")
        elif (key := authenticate(raw_key.strip())) is None:
            response = api_error(401, "Invalid or revoked API key.")
        else:
            request.api_key = key
            request.tenant = key.tenant
            return view(request, *args, **kwargs)
        response["WWW-Authenticate"] = "Bearer"
        return response

    return wrapper
