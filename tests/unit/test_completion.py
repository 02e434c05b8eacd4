"""`recovery completion bash|zsh|fish`: scripts generated from the parser (shtab); the bash one
is loaded into a real bash and asked to complete, as a user's Tab would."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from recovery.worker.cli import dispatch

RECOVERY = [sys.executable, "-m", "recovery.worker"]


def complete_in_bash(*words: str) -> list[str]:
    """What bash offers after `recovery WORDS...` (the last word being completed)."""
    script = subprocess.run([*RECOVERY, "completion", "bash"], capture_output=True, text=True, check=True).stdout
    line = " ".join(["recovery", *words])
    program = (
        f"{script}\n"
        f"COMP_WORDS=(recovery {' '.join(words)}); COMP_CWORD={len(words)}\n"
        f"COMP_LINE='{line}'; COMP_POINT={len(line)}\n"
        '_shtab_recovery; printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    done = subprocess.run(["bash", "--norc", "-c", program], capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.split()


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash here")
def test_bash_completes_commands_subcommands_and_options() -> None:
    assert set(complete_in_bash("dev-server", "st")) == {"start", "stop", "status"}
    assert {"diagnose", "dev-server"} <= set(complete_in_bash("d"))
    assert complete_in_bash("diagnose", "--ex") == ["--exit-code"]


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_every_shell_gets_a_script_naming_every_command(shell: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert dispatch(["completion", shell]) == 0
    text = capsys.readouterr().out
    for command in ("submit", "status", "dev-server", "cluster", "diagnose", "nodes", "completion"):
        assert command in text


def test_an_unknown_shell_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        dispatch(["completion", "csh"])
    assert exited.value.code == 2
    assert capsys.readouterr().err.startswith("recovery: completion: argument SHELL: invalid choice: 'csh'")
