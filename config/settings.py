"""Sessiondesk settings, read from the environment (see README "Configuration")."""

import os
from datetime import timedelta
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

from config.env import database_from_url, env_bool, env_float, env_int, env_list

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("SESSIONDESK_DATA_DIR", BASE_DIR / ".data"))

# Off unless set: `make run` turns it on for the demo. A 500 page never shows settings or locals.
DEBUG = env_bool("DEBUG", False)
SECRET_KEY = os.environ.get("SECRET_KEY") or ("insecure-dev-key-only-for-debug" if DEBUG else "")
if not SECRET_KEY:
    raise ImproperlyConfigured(
        "SECRET_KEY must be set when DEBUG is off (e.g. SECRET_KEY=$(python -c 'import secrets; "
        "print(secrets.token_urlsafe(50))')), or run the demo with DEBUG=true (make run does)."
    )
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "django_htmx",
    "axes",
    "drf_spectacular_sidecar",  # the API reference page's Swagger UI, served as our own static files
    "sessions_app",
    "search_app",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "sessions_app.api.middleware.EdgeMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "sessions_app.dashboard.history.HistorySafeMiddleware",
    "axes.middleware.AxesMiddleware",  # last: turns a lockout into sessions_app.tenancy.login_lockout's answer
]

# Login protection (sessions_app/tenancy/login_lockout.py): django-axes in the database.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
SESSIONDESK_LOGIN_ACCOUNT_LIMIT = env_int("LOGIN_ACCOUNT_LIMIT", 5)
SESSIONDESK_LOGIN_ADDRESS_LIMIT = env_int("LOGIN_ADDRESS_LIMIT", 50)
# Addresses or networks of reverse proxies whose X-Forwarded-For is believed; nobody else's is.
SESSIONDESK_TRUSTED_PROXIES = env_list("TRUSTED_PROXIES", [])
AXES_HANDLER = "sessions_app.tenancy.login_lockout.LockoutHandler"
AXES_FAILURE_LIMIT = SESSIONDESK_LOGIN_ACCOUNT_LIMIT
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_COOLOFF_MINUTES", 15))
AXES_CLIENT_IP_CALLABLE = "sessions_app.tenancy.login_lockout.client_address"
AXES_LOCKOUT_CALLABLE = "sessions_app.tenancy.login_lockout.lockout_response"
AXES_USERNAME_FORM_FIELD = "username"
AXES_RESET_ON_SUCCESS = False  # the handler clears the username's failures itself, never the address's
AXES_DISABLE_ACCESS_LOG = True
# Refused attempts are not counted (and do not extend the lockout): the count is of password checks made.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.csp",
            ],
            # The dashboard's tags live in its own room, not at the app's top level where Django would look.
            "libraries": {
                "dashboard": "sessions_app.dashboard.templatetags.dashboard",
                "review_tags": "sessions_app.dashboard.templatetags.review_tags",
            },
        },
    },
]

if os.environ.get("DATABASE_URL"):
    DATABASES = {"default": database_from_url(os.environ["DATABASE_URL"])}
else:
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": DATA_DIR / "sessiondesk.sqlite3",
            "OPTIONS": {
                # Writers queue for the lock (up to 20 s) instead of failing; ingestion retries past that.
                "transaction_mode": "IMMEDIATE",
                "timeout": 20,
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT") or BASE_DIR / "staticfiles")
STATICFILES_DIRS = [BASE_DIR / "static"]
# Hashed, compressed static files once `collectstatic` wrote their manifest (`manage.py serve` runs it first);
# until then WhiteNoise serves them from the source folders, so a server without the manifest still answers.
HASHED_STATIC = env_bool("SESSIONDESK_HASHED_STATIC", not DEBUG and (STATIC_ROOT / "staticfiles.json").exists())
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if HASHED_STATIC
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
WHITENOISE_USE_FINDERS = not HASHED_STATIC

SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
    "form-action": [CSP.SELF],
    "base-uri": [CSP.NONE],
    "object-src": [CSP.NONE],
}

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", not DEBUG)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = not DEBUG
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if env_bool("BEHIND_PROXY", False) else None
X_FRAME_OPTIONS = "DENY"

# Sessiondesk's own limits.
SESSIONDESK_MAX_PAYLOAD_BYTES = env_int("SESSIONDESK_MAX_PAYLOAD_BYTES", 8 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = SESSIONDESK_MAX_PAYLOAD_BYTES + 1024
# The last line against a request that holds its worker (docs/SECURITY.md): past this many seconds a request
# answers 503 with Retry-After and its worker is free again (sessions_app.api.middleware; 0 turns it off).
# `manage.py serve` gives gunicorn's own --timeout, which kills a worker stuck where no signal reaches, more.
SESSIONDESK_REQUEST_DEADLINE_SECONDS = env_float("SESSIONDESK_REQUEST_DEADLINE_SECONDS", 30.0)
# Messages in one snapshot (413 above it): recovery and the audit of one request stay bounded.
SESSIONDESK_MAX_SNAPSHOT_MESSAGES = env_int("SESSIONDESK_MAX_SNAPSHOT_MESSAGES", 10_000)
# Messages of kept recoveries per worker process (the folds that let a next step cost only itself): about 2.8 KB
# each (docs/BENCHMARKS.md), so the default holds a 5,000-run conversation several times over in under 300 MB.
SESSIONDESK_RECOVERY_CACHE_MESSAGES = env_int("SESSIONDESK_RECOVERY_CACHE_MESSAGES", 100_000)
# Search ranking: BM25 with Lucene's defaults (search_app.bm25 checks the ranges).
SESSIONDESK_SEARCH_BM25_K1 = env_float("SESSIONDESK_SEARCH_BM25_K1", 1.2)
SESSIONDESK_SEARCH_BM25_B = env_float("SESSIONDESK_SEARCH_BM25_B", 0.75)
# Which exact ranker answers (search_app.ranking.choose; all rank alike, so these only trade speed): the posting
# blocks for tenant-wide words and phrases, then BM25 in SQL where the backend is faster at it (None: the
# backend's `ranks_in_database` decides), else search_app.bm25 over the fetched candidates.
SESSIONDESK_SEARCH_BLOCKS = True
SESSIONDESK_SEARCH_SQL_RANKING: bool | None = None
# Unfolded documents of a tenant at which a commit folds them into posting blocks (search_app.folding): inline on
# SQLite (one writer at a time there anyway); on PostgreSQL the fold worker (manage.py fold_worker, which
# manage.py serve supervises) folds every tail it finds, checking every SESSIONDESK_FOLD_WORKER_INTERVAL seconds.
SESSIONDESK_SEARCH_FOLD_AT = 2000
# Matches a search counts exactly; past this many its totals are lower bounds, said to be ("10,000+").
SESSIONDESK_SEARCH_COUNT_BOUND = 10_000
SESSIONDESK_SEARCH_FOLD_INLINE = DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql"
SESSIONDESK_FOLD_WORKER_INTERVAL = env_float("SESSIONDESK_FOLD_WORKER_INTERVAL", 2.0)
# Whether manage.py serve starts and supervises the fold worker beside gunicorn (off where one runs elsewhere).
SESSIONDESK_FOLD_WORKER = env_bool("SESSIONDESK_FOLD_WORKER", True)
# Tools whose calls and results are never indexed, besides search's own (search_app.index.SEARCH_TOOL_NAMES).
SESSIONDESK_SEARCH_SKIP_TOOLS: tuple[str, ...] = ()

# Every log line passes the redaction detectors: no key, token or password in a log, whatever logged it.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"redact": {"()": "masking.log_filter.RedactingFilter"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["redact"]}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
}
