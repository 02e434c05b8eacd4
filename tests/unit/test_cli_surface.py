"""The command line's shape, as a new user meets it: help, one-line errors, subcommands."""

from __future__ import annotations

import argparse

import pytest

from recovery.worker.cli import build_parser, dispatch


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    found = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(found[0].choices) if found else {}


def test_a_bare_recovery_prints_help_and_succeeds(capsys: pytest.CaptureFixture[str]) -> None:
    assert dispatch([]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("usage: recovery") and "submit" in out and "dev-server" in out
    assert err == ""


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["no-such-command"], "recovery: argument COMMAND: invalid choice: 'no-such-command'"),
        (["status"], "recovery: status: the following arguments are required: RUN (see `recovery status --help`)"),
        (["submit"], "recovery: submit: the following arguments are required: JOB.sbatch (see"),
        (["dev-server", "restart"], "recovery: dev-server: argument COMMAND: invalid choice: 'restart'"),
        (["nodes", "clear"], "recovery: nodes clear: the following arguments are required: NAME"),
        (["list", "--bogus"], "recovery: unrecognized arguments: --bogus"),
    ],
)
def test_usage_errors_are_one_line_with_the_one_prefix(
    capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        dispatch(argv)
    assert exited.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.splitlines()) == 1, err
    assert err.startswith(expected)


def test_dev_server_has_subcommands_like_cluster() -> None:
    top = subcommands(build_parser())
    assert set(subcommands(top["dev-server"])) == {"start", "stop", "status"}
    assert {"start", "stop", "status"} <= set(subcommands(top["cluster"]))


def test_nodes_help_shows_no_internal_names_and_the_true_default(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        dispatch(["nodes", "clear", "--help"])
    text = capsys.readouterr().out
    assert "CLEAR_CLUSTER" not in text and "--cluster NAME" in text
    with pytest.raises(SystemExit):
        dispatch(["nodes", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    # The code's default is `local` (client/cli_nodes.py); the help must not promise Slurm's name.
    assert "default: local" in text
    assert "default: local; on Slurm its ClusterName" not in text


def leaves(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> dict[tuple[str, ...], argparse.ArgumentParser]:
    """Every command as its words (`("cluster", "start")`) and its parser, groups included."""
    found = {path: parser}
    for name, child in subcommands(parser).items():
        found |= leaves(child, (*path, name))
    return found


# Commands that change something.
CHANGING = [
    ("submit",),
    ("pause",),
    ("resume",),
    ("cancel",),
    ("dev-server", "start"),
    ("dev-server", "stop"),
    ("cluster", "start"),
    ("cluster", "stop"),
    ("cluster", "node-down"),
    ("cluster", "node-drain"),
    ("cluster", "node-up"),
    ("nodes", "clear"),
]


def json_option(parser: argparse.ArgumentParser) -> argparse.Action | None:
    return next((a for a in parser._actions if "--json" in a.option_strings), None)


def test_every_json_option_says_what_it_prints() -> None:
    undocumented = [
        " ".join(words)
        for words, parser in leaves(build_parser()).items()
        if (option := json_option(parser)) is not None and not option.help
    ]
    assert not undocumented


@pytest.mark.parametrize("words", CHANGING, ids=" ".join)
def test_every_command_that_changes_something_has_json(words: tuple[str, ...]) -> None:
    assert json_option(leaves(build_parser())[words]) is not None
