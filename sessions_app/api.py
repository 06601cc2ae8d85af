from django.http import HttpRequest, JsonResponse


def post_snapshot(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"error": "not implemented yet"}, status=501)
