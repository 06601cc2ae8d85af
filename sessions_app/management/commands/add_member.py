import getpass
import sys
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from sessions_app.audit.events import record_event
from sessions_app.audit.vocabulary import EventClass
from sessions_app.models import Membership, Role
from sessions_app.tenancy.scoping import tenant_for_command


class Command(BaseCommand):
    help = "Add a user to a tenant with a role (creating the user if needed)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True)
        parser.add_argument("--user", required=True)
        parser.add_argument("--role", required=True, choices=Role.values)
        parser.add_argument("--password-stdin", action="store_true", help="Read the new user's password from stdin.")

    def handle(self, *args: Any, tenant: str, user: str, role: str, password_stdin: bool, **options: Any) -> None:
        found = tenant_for_command(tenant)
        user_model = get_user_model()
        existing = user_model.objects.filter(username=user).first()
        password = None
        if existing is None:
            if password_stdin:
                password = sys.stdin.readline().rstrip("\n")
            else:
                password = getpass.getpass(f"Password for {user}: ")
            try:
                validate_password(password, user_model(username=user))
            except ValidationError as error:
                raise CommandError("Password rejected: " + " ".join(error.messages)) from None
        with transaction.atomic():
            if existing is None:
                existing = user_model.objects.create_user(username=user, password=password)
            Membership.objects.update_or_create(tenant=found, user=existing, defaults={"role": role})
            record_event(found, EventClass.MEMBER_CHANGED, actor="manage.py add_member")
        self.stdout.write(f"{user} is {role} of {tenant}.")
