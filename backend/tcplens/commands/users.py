"""``tcplens users create EMAIL --password-stdin``: create an account (operators, tests)."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser("users", help="administer user accounts")
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)
    create = actions.add_parser("create", help="create a user (with a personal workspace they own)")
    create.add_argument("email")
    create.add_argument(
        "--password-stdin",
        action="store_true",
        required=True,
        help="read the password from the first line of standard input",
    )
    create.set_defaults(run=run_create)


def run_create(args: argparse.Namespace) -> int:
    from tcplens.commands.admin import admin_session
    from tcplens.errors import TcplensError
    from tcplens.services import accounts

    password = sys.stdin.readline().rstrip("\r\n")
    with admin_session() as session:
        try:
            user = accounts.create_user(session, args.email, password)
        except TcplensError as error:
            print(f"tcplens users create: {error.detail}", file=sys.stderr)
            return 1
    print(f"created user {user.email} ({user.id})")
    return 0
