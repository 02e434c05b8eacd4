"""With --json, stdout is JSON only, on Slurm: every command that takes --json.

The bug this guards: `recovery submit --json` on Slurm printed the adapter's log line
(`[info] sbatch job_id=...`) on stdout before the JSON, so `... | jq` failed. The local twin is
tests/embedded/test_json_output.py; the list of commands comes from the parser.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.recovery_rig import Rig, job_script
from tests.json_output import json_commands, json_documents


@pytest.mark.timeout(300)
async def test_every_json_command_prints_json_only(rig: Rig, tmp_path: Path) -> None:
    script = job_script(rig.workdir("json"), first_run="fine", seconds=30)
    log = tmp_path / "rank0.log"
    log.write_text("RuntimeError: CUDA error: an illegal memory access was encountered\n")
    rig.start_worker()
    submitted = rig.recovery("submit", "--scheduler", "slurm", "--json", str(script))
    assert submitted.returncode == 0, submitted.stderr
    (answer,) = json_documents(("submit",), submitted.stdout)
    assert answer["job_id"], answer
    rig.jobs.append(answer["job_id"])
    commands = {
        ("submit",): None,  # run above
        ("list",): ["list"],
        ("status",): ["status", answer["run"]],
        # the local scheduler's daemon, which a Slurm user does not run: "not running" (exit 3)
        ("cluster", "status"): ["cluster", "status"],
        ("nodes",): ["nodes", "--cluster", "recovery"],
        ("diagnose",): ["diagnose", str(log)],
        ("signatures",): ["signatures"],
    }
    assert set(commands) == json_commands()
    for command, argv in commands.items():
        if argv is None:
            continue
        done = rig.recovery(*argv, "--json")
        assert done.returncode in ((0, 3) if command == ("cluster", "status") else (0,)), f"{command}: {done.stderr}"
        assert json_documents(command, done.stdout)
