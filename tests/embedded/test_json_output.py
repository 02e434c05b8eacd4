"""With --json, stdout is JSON only, on the local scheduler: every command that takes --json.

Its Slurm twin is tests/integration/test_json_output.py; the list of commands comes from the
parser (tests/json_output.py), so a new --json command fails here until it is run here too.
"""

from __future__ import annotations

from pathlib import Path

from tests.embedded.conftest import Embedded
from tests.json_output import json_commands, json_documents


def test_every_json_command_prints_json_only(embedded: Embedded, tmp_path: Path) -> None:
    script = embedded.job_script("json")
    log = tmp_path / "rank0.log"
    log.write_text("RuntimeError: CUDA error: an illegal memory access was encountered\n")
    embedded.start_worker()
    try:
        submitted = embedded.recovery("submit", "--json", str(script), cwd=script.parent)
        assert submitted.returncode == 0, submitted.stderr
        (answer,) = json_documents(("submit",), submitted.stdout)
        assert answer["job_id"], answer
        commands = {
            ("submit",): None,  # run above
            ("list",): ["list"],
            ("status",): ["status", answer["run"]],
            ("cluster", "status"): ["cluster", "status"],
            ("nodes",): ["nodes"],
            ("diagnose",): ["diagnose", str(log)],
            ("signatures",): ["signatures"],
        }
        assert set(commands) == json_commands()
        for command, argv in commands.items():
            if argv is None:
                continue
            done = embedded.recovery(*argv, "--json")
            assert done.returncode == 0, f"{command}: {done.stderr}"
            assert json_documents(command, done.stdout)
    finally:
        embedded.stop_workers()
