from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from sessions_app.audit import evidence
from sessions_app.audit.digests import prompt_sha256
from sessions_app.audit.vocabulary import ContractKind
from sessions_app.management.run_evidence import refused_input_as_command_error
from sessions_app.tenancy.scoping import tenant_for_command


class Command(BaseCommand):
    help = (
        "Register an agent's prompt contract: a hash of its system prompt, a label the prompt carries, or a "
        "declaration that it runs on dynamic instructions. --prompt-file is hashed here; its text is never stored."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True, help="Tenant slug.")
        parser.add_argument("--agent", required=True, help="Agent name, as runs report it.")
        kind = parser.add_mutually_exclusive_group(required=True)
        kind.add_argument("--prompt-file", type=Path, help="A file holding the required system prompt.")
        kind.add_argument("--sha256", help="The SHA-256 (hex) of the required system prompt, stripped.")
        kind.add_argument("--label", help="A short label the system prompt or instructions carry.")
        kind.add_argument("--dynamic", action="store_true", help="The agent runs on dynamic instructions.")

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_for_command(options["tenant"])
        if options["prompt_file"] is not None:
            try:
                text = options["prompt_file"].read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as error:
                raise CommandError(f"Cannot read the prompt file: {error}") from None
            if not text.strip():
                raise CommandError("The prompt file is empty.")
            data = {"kind": ContractKind.HASH, "value": prompt_sha256(text)}
        elif options["sha256"] is not None:
            data = {"kind": ContractKind.HASH, "value": options["sha256"]}
        elif options["label"] is not None:
            data = {"kind": ContractKind.LABEL, "value": options["label"]}
        else:
            data = {"kind": ContractKind.DYNAMIC}
        with refused_input_as_command_error():
            contract, count = evidence.set_prompt_contract(tenant, options["agent"], data)
        shown = f" {contract.value}" if contract.value else ""
        self.stdout.write(
            f"Prompt contract for agent {contract.agent_name!r}: {contract.kind}{shown}; re-audited {count} run(s)."
        )
