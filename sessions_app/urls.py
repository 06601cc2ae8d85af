from django.urls import path

from sessions_app import views

urlpatterns = [
    path("healthz", views.healthz, name="healthz"),
]
