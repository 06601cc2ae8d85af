"""gunicorn's settings for `manage.py serve` (loaded with `--config python:config.gunicorn`).

gunicorn writes a `Server:` header naming itself on every answer and has no setting for it; its response class
reads the module's SERVER when it answers, so the name is replaced here, before any worker serves. The header
stays (HTTP allows any product token), but it names no server software or version an attacker could match.
"""

import gunicorn.http.wsgi

gunicorn.http.wsgi.SERVER = "sessiondesk"
