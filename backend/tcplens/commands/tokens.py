"""``tcplens tokens create --user EMAIL [--workspace NAME] [--scope SCOPE ...]``: issue an API
token; prints it."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser("tokens", help="administer API tokens")
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)
    create = actions.add_parser(
        "create", help="issue an API token and print it (the only time it is shown)"
    )
    create.add_argument("--user", required=True, metavar="EMAIL")
    create.add_argument(
        "--workspace", metavar="NAME", help="workspace by name (default: the user's own)"
    )
    create.add_argument("--name", default="cli", help="a label for the token (default: cli)")
    create.add_argument(
        "--scope",
        action="append",
        dest="scopes",
        metavar="SCOPE",
        help="what the token may do, repeatable: captures:read, captures:write, admin "
        "(default: captures:read and captures:write)",
    )
    create.set_defaults(run=run_create)


def run_create(args: argparse.Namespace) -> int:
    from tcplens.commands.admin import admin_session
    from tcplens.errors import TcplensError
    from tcplens.services import accounts, api_tokens

    with admin_session() as session:
        try:
            user = accounts.user_by_email(session, args.user)
            if args.workspace:
                workspace = accounts.workspace_by_name(session, user.id, args.workspace)
            else:
                owned = [w for w in accounts.workspaces_of(session, user.id) if w.role == "owner"]
                if not owned:
                    raise accounts.WorkspaceNotFound(f"{user.email} owns no workspace")
                workspace = owned[0]
            scopes = api_tokens.checked_scopes(args.scopes)
            issued = api_tokens.issue(session, user.id, workspace.id, args.name, scopes)
        except TcplensError as error:
            print(f"tcplens tokens create: {error.detail}", file=sys.stderr)
            return 1
    print(issued.token)
    return 0
