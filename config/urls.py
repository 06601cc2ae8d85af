from django.urls import include, path

from sessions_app.api import mcp, otlp

urlpatterns = [
    path("api/v1/", include("sessions_app.api.urls")),
    # OTLP/HTTP's own path: an exporter given OTEL_EXPORTER_OTLP_ENDPOINT=<this site> posts spans here.
    path("v1/traces", otlp.post_traces, name="otlp-traces"),
    # The Model Context Protocol (streamable HTTP), authenticated by the same API keys.
    path("mcp", mcp.mcp_endpoint, name="mcp"),
    path("", include("sessions_app.dashboard.urls")),
]
