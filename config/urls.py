from django.urls import include, path

from sessions_app.api import otlp

urlpatterns = [
    path("api/v1/", include("sessions_app.api.urls")),
    # OTLP/HTTP's own path: an exporter given OTEL_EXPORTER_OTLP_ENDPOINT=<this site> posts spans here.
    path("v1/traces", otlp.post_traces, name="otlp-traces"),
    path("", include("sessions_app.dashboard.urls")),
]
