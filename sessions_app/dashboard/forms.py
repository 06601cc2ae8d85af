"""Dashboard forms: filters read from query strings, and the few forms that change something."""

from collections.abc import Iterable
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, TypedDict

from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import User

from masking import compile_rules
from masking.tenant_patterns import MAX_PATTERN_LENGTH, MAX_PATTERNS
from search_app.query import MAX_QUERY_CHARS
from sessions_app.audit.listing import EventFilters
from sessions_app.audit.run_verdicts import verdict_choices
from sessions_app.audit.vocabulary import EventClass, Evidence, choices
from sessions_app.dashboard.conversation_list import SORTS, ConversationFilters, Range
from sessions_app.models import Role, RunState, Source
from sessions_app.transcripts.prices import BadPrice, parse_overrides


def _start_of(day: date | None) -> datetime | None:
    return datetime.combine(day, time.min, tzinfo=UTC) if day else None


def _end_of(day: date | None) -> datetime | None:
    # An inclusive "until" date: everything before the next midnight.
    return datetime.combine(day + timedelta(days=1), time.min, tzinfo=UTC) if day else None


class _Bounds(TypedDict):
    since: datetime | None
    until: datetime | None


def _bounds(data: dict[str, Any]) -> _Bounds:
    """The `since` and `until` dates of a cleaned form as the times a filter compares (until is exclusive)."""
    return {"since": _start_of(data.get("since")), "until": _end_of(data.get("until"))}


def _check_range(data: dict[str, Any]) -> None:
    since, until = data.get("since"), data.get("until")
    if since and until and since > until:
        raise forms.ValidationError("'From' must not be after 'Until'.")


class _DateRangeForm(forms.Form):
    """A form whose `since` date may not be after its `until` date (the fields are the subclass's)."""

    def clean(self) -> dict[str, Any]:
        super().clean()
        _check_range(self.cleaned_data)
        return self.cleaned_data


def _set_choices(form: forms.Form, name: str, choices: Iterable[tuple[str, str]]) -> None:
    field = form.fields[name]
    if not isinstance(field, forms.ChoiceField):
        raise TypeError(f"{name} is not a choice field")
    field.choices = choices


# The list's numeric ranges: URL parameter stem, list column, label, unit scale (what one unit of the form's
# number is in the column: dollars to micro-dollars, seconds to milliseconds), whether it takes decimals.
RANGE_FILTERS: tuple[tuple[str, str, str, int, bool], ...] = (
    ("turns", "turn_count", "Turns", 1, False),
    ("tool_calls", "tool_call_count", "Tool calls", 1, False),
    ("tokens", "total_tokens", "Tokens", 1, False),
    ("cost", "cost_micro_usd", "Cost (USD)", 1_000_000, True),
    ("duration", "duration_ms", "Duration (s)", 1000, True),
)
MAX_RANGE = 10**15


def _range_field(label: str, decimals: bool) -> forms.Field:
    if decimals:
        return forms.DecimalField(required=False, label=label, min_value=0, max_value=10**9, decimal_places=6)
    return forms.IntegerField(required=False, label=label, min_value=0, max_value=MAX_RANGE)


class _RangeFields(forms.Form):
    """`<stem>_min` and `<stem>_max` for each of RANGE_FILTERS, both included, either left open."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for stem, _, label, _, decimals in RANGE_FILTERS:
            self.fields[f"{stem}_min"] = _range_field(f"{label} from", decimals)
            self.fields[f"{stem}_max"] = _range_field(f"{label} to", decimals)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        for stem, _, label, _, _ in RANGE_FILTERS:
            low, high = data.get(f"{stem}_min"), data.get(f"{stem}_max")
            if low is not None and high is not None and low > high:
                raise forms.ValidationError(f"{label}: 'from' must not be more than 'to'.")
        return data

    def ranges(self) -> tuple[Range, ...]:
        found = []
        for stem, column, _, scale, _ in RANGE_FILTERS:
            low, high = self.cleaned_data.get(f"{stem}_min"), self.cleaned_data.get(f"{stem}_max")
            if low is not None or high is not None:
                found.append(
                    Range(
                        column,
                        None if low is None else int(low * scale),
                        None if high is None else int(high * scale),
                    )
                )
        return tuple(found)

    def range_inputs(self) -> list[tuple[str, forms.BoundField, forms.BoundField]]:
        return [(label, self[f"{stem}_min"], self[f"{stem}_max"]) for stem, _, label, _, _ in RANGE_FILTERS]


class ConversationFilterForm(_RangeFields, _DateRangeForm):
    q = forms.CharField(required=False, max_length=MAX_QUERY_CHARS, label="Text")
    verdict = forms.ChoiceField(required=False)
    state = forms.ChoiceField(required=False, label="Run state")
    agent = forms.CharField(required=False, max_length=200)
    since = forms.DateField(required=False, label="From", widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(required=False, label="Until", widget=forms.DateInput(attrs={"type": "date"}))
    has_repairs = forms.BooleanField(required=False, label="Has repairs")
    sort = forms.ChoiceField(required=False, choices=[(key, sort.label) for key, sort in SORTS.items()])
    cursor = forms.CharField(required=False, max_length=200, widget=forms.HiddenInput)

    def __init__(self, *args: Any, agents: list[str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _set_choices(self, "verdict", [("", "Any verdict")] + [(v, v.title()) for v in verdict_choices()])
        _set_choices(self, "state", [("", "Any state"), *RunState.choices])
        self.agents = agents or []

    def filters(self) -> ConversationFilters:
        data = self.cleaned_data
        return ConversationFilters(
            state=data.get("state") or "",
            agent=(data.get("agent") or "").strip(),
            verdict=data.get("verdict") or "",
            **_bounds(data),
            has_repairs=bool(data.get("has_repairs")),
            ranges=self.ranges(),
        )

    def sort_key(self) -> str:
        return self.cleaned_data.get("sort") or "recent"


class SearchForm(forms.Form):
    q = forms.CharField(required=False, max_length=MAX_QUERY_CHARS, label="Search")
    role = forms.ChoiceField(
        required=False,
        choices=[
            ("", "Any role"),
            ("user", "User"),
            ("assistant", "Assistant"),
            ("tool_call", "Tool call"),
            ("tool_result", "Tool result"),
            ("system", "System"),
        ],
    )
    since = forms.DateField(required=False, label="From", widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(required=False, label="Until", widget=forms.DateInput(attrs={"type": "date"}))
    conversation = forms.CharField(required=False, max_length=400, widget=forms.HiddenInput)
    everywhere = forms.BooleanField(required=False, label="All my tenants")
    # Checked by search itself (search_app.paging), which names what is wrong with a bad one.
    cursor = forms.CharField(required=False, max_length=512, widget=forms.HiddenInput)

    def since_dt(self) -> datetime | None:
        return _start_of(self.cleaned_data.get("since"))

    def until_dt(self) -> datetime | None:
        return _end_of(self.cleaned_data.get("until"))


class ApiKeyForm(forms.Form):
    kind = forms.ChoiceField(
        choices=Source.choices, help_text="server: an agent backend; client: anything an end user controls."
    )
    label = forms.CharField(required=False, max_length=200)


class InvitationForm(forms.Form):
    note = forms.CharField(max_length=200, required=False)
    role = forms.ChoiceField(choices=Role.choices)


class RoleForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices)


USERNAME_UNAVAILABLE = "That username cannot be used. Choose another."


class InvitationSignupForm(UserCreationForm[User]):
    """Django's sign-up form with the sign-in name scoped to the tenant that invites: the invitee picks a name and
    signs in as `name@tenant` (`sign_in_name`). Usernames are global, so a name picked bare would tell whether it
    exists in any tenant; a scoped one can clash only with a member of this very tenant (who the joining member can
    see anyway), and `@` is not part of a picked name, so no other tenant's account ever has one of these names.
    Whether even that is taken is looked at only once every other field is valid, and the answer names no account.
    """

    def __init__(self, *args: Any, tenant_slug: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tenant_slug = tenant_slug
        self.fields["username"].widget.attrs["maxlength"] = str(MAX_PICKED_NAME)
        self.fields["username"].help_text = (
            f"Letters, digits and . + - _ only, at most {MAX_PICKED_NAME}. You will sign in as "
            f"<em>name</em>@{tenant_slug}."
        )

    def clean_username(self) -> str:
        name = str(self.cleaned_data.get("username") or "")
        if "@" in name:
            raise forms.ValidationError("Pick a name without '@': the tenant's part is added for you.")
        if len(name) > MAX_PICKED_NAME:
            raise forms.ValidationError(f"Pick a name of at most {MAX_PICKED_NAME} characters.")
        return sign_in_name(name, self.tenant_slug)

    def validate_unique(self) -> None:
        """Looked at in `_post_clean`, after everything else."""

    def validate_password_for_user(self, user: User, password_field_name: str = "password2") -> None:  # noqa: S107  # a field name
        """The validators judge the password itself, so what they say goes under "Password", not under its
        confirmation (Django's default field; B13). Only once the two agree: a mismatch is said on its own."""
        if self.cleaned_data.get("password2"):
            # The mixin's method is absent from the stubs.
            super().validate_password_for_user(user, password_field_name="password1")  # type: ignore[misc]  # noqa: S106

    def _post_clean(self) -> None:
        super()._post_clean()  # type: ignore[misc]  # ModelForm's hook (password validation), absent from the stubs
        username = self.cleaned_data.get("username")
        if not self.errors and username and User.objects.filter(username__iexact=username).exists():
            self.add_error("username", USERNAME_UNAVAILABLE)


# A Django username holds 150 characters: the picked name, '@' and a tenant slug (at most 64).
MAX_PICKED_NAME = 85


def sign_in_name(name: str, tenant_slug: str) -> str:
    """The account name of someone who picked `name` joining the tenant `tenant_slug` by invitation."""
    return f"{name}@{tenant_slug}"


class RedactionPatternsForm(forms.Form):
    patterns = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 8, "cols": 60}),
        help_text=(
            "One regular expression per line (RE2 syntax); matches are masked in transcripts, snippets and exports. "
            f"At most {MAX_PATTERNS} patterns of {MAX_PATTERN_LENGTH} characters each."
        ),
    )

    def clean_patterns(self) -> list[str]:
        lines = [line.strip() for line in self.cleaned_data["patterns"].splitlines() if line.strip()]
        try:
            compile_rules(lines)  # the same compiler masking uses, so what saves also masks
        except ValueError as error:
            raise forms.ValidationError(str(error)) from None
        return lines


class RetentionForm(forms.Form):
    retention_days = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=36500,
        label="Keep conversations for (days)",
        help_text="Empty keeps everything. Conversations with no activity for longer are deleted by apply_retention.",
    )


MAX_PRICED_MODELS = 200
PRICE_KEYS = ("input", "output", "cache_read")


def price_lines(overrides: dict[str, Any]) -> str:
    """A tenant's `price_overrides` as the form's lines: `model input output [cache_read]`."""
    return "\n".join(
        " ".join([str(model), *(str(entry[key]) for key in PRICE_KEYS if entry.get(key) is not None)])
        for model, entry in sorted(overrides.items())
        if isinstance(entry, dict)
    )


def parse_price_lines(text: str) -> dict[str, dict[str, str]]:
    """The form's lines as `price_overrides`; ValidationError names the line and what is wrong with it."""
    overrides: dict[str, dict[str, str]] = {}
    lines = [(n, line.split()) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    if len(lines) > MAX_PRICED_MODELS:
        raise forms.ValidationError(f"At most {MAX_PRICED_MODELS} models can have a negotiated price.")
    for number, words in lines:
        model, prices = words[0], words[1:]
        if len(prices) not in (2, 3):
            raise forms.ValidationError(
                f"Line {number} ({model}): give the model name, then its input and output price, and optionally its "
                "cache-read price, in US dollars per million tokens (for example: gpt-5-mini 0.25 2 0.025)."
            )
        if model in overrides:
            raise forms.ValidationError(f"Line {number}: {model} has a price on an earlier line already.")
        if len(model) > 200:
            raise forms.ValidationError(f"Line {number}: a model name is at most 200 characters.")
        entry = dict(zip(PRICE_KEYS, prices, strict=False))
        try:
            parse_overrides({model: entry})
        except BadPrice as error:
            raise forms.ValidationError(f"Line {number}: {error}") from None
        overrides[model] = entry
    return overrides


class CostSettingsForm(forms.Form):
    stuck_after_hours = forms.IntegerField(
        min_value=1,
        max_value=8760,
        label="A running run is STUCK after (hours)",
        help_text="A run still running with no new snapshot for this long is STUCK in its verdict, the list, the "
        "overview and the replay gate. 1 to 8760 hours (a year).",
    )
    prices = forms.CharField(
        required=False,
        label="Negotiated prices",
        widget=forms.Textarea(attrs={"rows": 8, "cols": 60, "spellcheck": "false"}),
        help_text="One model per line: its name as the model reports it, then USD per million input, output and "
        "(optionally) cache-read tokens, e.g. gpt-5-mini 0.25 2 0.025. They replace genai-prices' list price for "
        "model steps ingested from now on. Empty uses the list prices.",
    )

    def clean_prices(self) -> dict[str, dict[str, str]]:
        return parse_price_lines(self.cleaned_data["prices"])


class AuditEventFilterForm(_DateRangeForm):
    event_class = forms.ChoiceField(required=False, label="Class")
    run_id = forms.CharField(required=False, max_length=200, label="Run id")
    since = forms.DateField(required=False, label="From", widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(required=False, label="Until", widget=forms.DateInput(attrs={"type": "date"}))
    cursor = forms.CharField(required=False, max_length=200, widget=forms.HiddenInput)

    def __init__(self, *args: Any, classes: list[str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        known = dict(choices(EventClass))
        _set_choices(
            self,
            "event_class",
            [("", "Any class")]
            + [(value, known.get(value, value.replace("_", " ").capitalize())) for value in (classes or [])],
        )

    def filters(self) -> EventFilters:
        data = self.cleaned_data
        return EventFilters(
            event_class=data.get("event_class") or "",
            run_id=(data.get("run_id") or "").strip(),
            **_bounds(data),
        )


class OverviewRangeForm(forms.Form):
    """The overview's days: both included, the last 30 days by default, at most MAX_DAYS."""

    DEFAULT_DAYS = 30
    MAX_DAYS = 366

    since = forms.DateField(required=False, label="From", widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(required=False, label="Until", widget=forms.DateInput(attrs={"type": "date"}))

    def __init__(self, *args: Any, today: date, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.today = today

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        if self.errors:
            return data
        until = data.get("until") or self.today
        since = data.get("since") or until - timedelta(days=self.DEFAULT_DAYS - 1)
        data.update(since=since, until=until)
        _check_range(data)
        if (until - since).days + 1 > self.MAX_DAYS:
            raise forms.ValidationError(f"Choose at most {self.MAX_DAYS} days.")
        return data

    def days(self) -> tuple[date, date]:
        return self.cleaned_data["since"], self.cleaned_data["until"]


class ReceiptForm(forms.Form):
    effect = forms.CharField(max_length=200, help_text="The intended effect, e.g. invoice-email-sent.")
    # No default: the person picks (only "outcome" passes the audit; a default would record the wrong proof).
    evidence = forms.ChoiceField(choices=[("", "— choose the evidence —"), *choices(Evidence)])
    checked_by = forms.CharField(max_length=200, label="Checked by")
    reference = forms.CharField(
        required=False, max_length=500, help_text="A reference or digest of the destination, never its contents."
    )


class WaitForm(forms.Form):
    owner = forms.CharField(max_length=200)
    decision = forms.CharField(max_length=500, label="Decision needed")
    deadline = forms.DateTimeField(
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}), help_text="UTC.", label="Deadline"
    )
    resume_token = forms.CharField(
        required=False, max_length=500, help_text="Optional; stored only as a hash.", label="Resume token"
    )


class ResolveWaitForm(forms.Form):
    resume_token = forms.CharField(
        max_length=500,
        min_length=16,
        label="Resume token",
        widget=forms.PasswordInput(render_value=False),
        help_text="The token given when the wait was recorded; checked against its stored hash.",
    )
