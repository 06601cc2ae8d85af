from django.urls import include, path

urlpatterns = [
    path("api/v1/", include("search_app.api_urls")),
    path("api/v1/", include("sessions_app.api.urls")),
    path("", include("sessions_app.dashboard.urls")),
]
