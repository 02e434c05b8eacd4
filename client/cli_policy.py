"""`recovery policy show|check`: the policy a run would get, every default filled in, and a
checker that lists every problem of a policy file at once (docs/policies.md)."""

from __future__ import annotations

import argparse
import json
import sys

import yaml

from recovery.workflows.policy import Policy
from recovery.workflows.policy_files import BUILTIN, load_policy, policy_problems


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    policy = subparsers.add_parser("policy", help="show a policy with its defaults, or check a policy file")
    commands = policy.add_subparsers(dest="policy_command", metavar="COMMAND", required=True)

    show = commands.add_parser("show", help="the effective policy: every key, defaults filled in")
    show.add_argument("policy", metavar="NAME|FILE", help=f"a built-in policy ({', '.join(BUILTIN)}) or a YAML file")
    show.add_argument("--json", action="store_true", help="the policy as one JSON object on stdout")
    show.set_defaults(func=_show)

    check = commands.add_parser("check", help="validate a policy file: exit 0 if valid, else 1 and one line per error")
    check.add_argument("policy", metavar="FILE")
    check.set_defaults(func=_check)


def effective(policy: Policy) -> dict[str, object]:
    """The policy as its file would say it: durations as `30s`, `10m`; every key present."""
    return policy.model_dump(mode="json")


def _show(args: argparse.Namespace) -> int:
    data = effective(load_policy(args.policy))  # PolicyError: one line, from the dispatcher
    if args.json:
        sys.stdout.write(json.dumps(data) + "\n")
    else:
        sys.stdout.write(f"# effective policy {args.policy}: every key, defaults filled in\n")
        sys.stdout.write(yaml.safe_dump(data, sort_keys=False, default_flow_style=False))
    return 0


def _check(args: argparse.Namespace) -> int:
    problems = policy_problems(args.policy)
    for line in problems:
        print(f"recovery: {line}", file=sys.stderr)
    if problems:
        return 1
    print(f"{args.policy}: valid policy {load_policy(args.policy).name!r}")
    return 0
