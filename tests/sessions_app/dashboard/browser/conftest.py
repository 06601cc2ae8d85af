"""Playwright driving Debian's Chromium against pytest-django's live server (no browser download).

Set SESSIONDESK_SCREENSHOTS=<dir> to save a PNG of each main view while the tests run (see `make screenshots`).
"""

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.sessions_app.dashboard.conftest import PASSWORD, build_world

CHROMIUM = os.environ.get("SESSIONDESK_CHROMIUM", "/usr/bin/chromium")


@pytest.fixture(scope="module")
def chromium():
    """One browser per module, closed with it: Playwright's sync API keeps an event loop running in this thread,
    which would break every later test that runs an agent (asyncio.run refuses a running loop)."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: apt-get install -y chromium (or set SESSIONDESK_CHROMIUM)")
    from playwright.sync_api import sync_playwright

    # While the loop runs, the test's own (synchronous) ORM calls would otherwise be refused as async-unsafe.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM,
                headless=True,
                args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
            )
            yield browser
            browser.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def live_world(transactional_db, live_server):
    return build_world()


@pytest.fixture
def demo(transactional_db, live_server, monkeypatch):
    """`seed_demo` as `make run` runs it, on its first three conversations (demo-0-001 has five runs). Its agents
    run their own event loop, which Playwright's running loop refuses in this thread: they record in another."""
    from sessions_app.demo import scenarios  # the harness is an optional extra: only the demo's tests need it

    with ThreadPoolExecutor(max_workers=1) as pool:
        payloads = pool.submit(scenarios.demo_payloads, 3).result()
    monkeypatch.setattr(scenarios, "demo_payloads", lambda count: payloads)
    with open(os.devnull, "w") as quiet:
        call_command("seed_demo", conversations=3, stdout=quiet)


@pytest.fixture
def page(chromium, live_server):
    context = chromium.new_context(viewport={"width": 1280, "height": 800}, accept_downloads=True)
    page = context.new_page()
    errors: list[str] = []
    # A CSP violation or a script error shows up in the console: fail the test on any.
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.console_errors = errors
    yield page
    context.close()


def log_in(page, live_server, username: str, password: str = PASSWORD):
    page.goto(f"{live_server.url}/login")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_server.url}/conversations/")
    return page


@pytest.fixture
def login(page, live_server):
    return lambda username, password=PASSWORD: log_in(page, live_server, username, password)


@pytest.fixture
def page_without_javascript(chromium, live_server):
    """A browser page with scripts off, logged in as the support member."""
    context = chromium.new_context(java_script_enabled=False)
    yield log_in(context.new_page(), live_server, "sam")
    context.close()


@pytest.fixture
def shoot(page):
    """Save a screenshot of the current page as <name>.png when SESSIONDESK_SCREENSHOTS is set."""
    target = os.environ.get("SESSIONDESK_SCREENSHOTS")

    def save(name: str, *, full_page: bool = False) -> None:
        if target:
            Path(target).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(Path(target) / f"{name}.png"), full_page=full_page)

    return save
