"""Row counts of every Sessiondesk table, to prove a rejected input changed nothing."""

from django.apps import apps


def row_counts() -> dict[str, int]:
    counts = {}
    for app_label in ("sessions_app", "search_app"):
        for model in apps.get_app_config(app_label).get_models():
            counts[model._meta.label] = model._default_manager.count()
    return counts
