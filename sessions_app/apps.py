from django.apps import AppConfig
from django.db.backends.signals import connection_created


class SessionsAppConfig(AppConfig):
    name = "sessions_app"
    verbose_name = "Sessions"

    def ready(self) -> None:
        from sessions_app.core.postgres_times import send_times_in_utc

        connection_created.connect(send_times_in_utc, dispatch_uid="sessions_app.send_times_in_utc")
