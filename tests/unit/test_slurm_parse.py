"""The Slurm adapter's pure parsers, on output captured from Slurm 22.05.8 (the dev cluster) and
on the formats newer releases print where they differ (noted per test).

The tabular captures in `slurm_outputs/` were taken with the delimiters `<F>` and `<R>` stand
for below (a fixed nonce, so the files can be read); the adapter picks a fresh one per call.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from recovery.activities.schedulers import slurm_facts as facts
from recovery.activities.schedulers import slurm_parse as sp
from recovery.activities.schedulers.slurm_comment import (
    format_comment,
    parse_comment,
    script_comment,
    submission_comment,
)
from recovery.activities.schedulers.slurm_states import map_state, node_unusable
from recovery.workflows.models import JobState

OUTPUTS = Path(__file__).parent / "slurm_outputs"
DELIMS = sp.Delimiters(field="\x1f0123\x1f", record="\x1e0123\x1e")


def capture(name: str) -> str:
    text = (OUTPUTS / name).read_text()
    return text.replace("<F>", DELIMS.field).replace("<R>", DELIMS.record)


@pytest.fixture
def berlin() -> Iterator[None]:
    """Slurm prints local time without a zone: parse it in a zone that is not UTC."""
    old = os.environ.get("TZ")
    os.environ["TZ"] = "Europe/Berlin"
    time.tzset()
    yield
    if old is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = old
    time.tzset()


# --- hostlists -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "hosts"),
    [
        ("node[1-3,5]", ["node1", "node2", "node3", "node5"]),
        ("node1", ["node1"]),
        ("node[1-2],gpu7", ["node1", "node2", "gpu7"]),
        ("gpu[01-03]", ["gpu01", "gpu02", "gpu03"]),
        ("gpu[08-10]", ["gpu08", "gpu09", "gpu10"]),
        ("rack[1-2]-n[1-2]", ["rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2"]),
        ("node[3-4],node3", ["node3", "node4"]),
        ("(null)", []),
        ("None assigned", []),
        ("", []),
    ],
)
def test_expand_hostlist(text: str, hosts: list[str]) -> None:
    assert sp.expand_hostlist(text) == hosts


# --- exit codes ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3:0", (3, None)),  # exit 3
        ("0:9", (None, 9)),  # killed by signal 9
        ("0:0", (0, None)),
        ("0:15", (None, 15)),
        ("7:0", (7, None)),
        ("768", (3, None)),  # raw wait status: squeue -O exit_code, slurmrestd
        ("1792", (7, None)),
        ("9", (None, 9)),
        ("0", (0, None)),
        ("", (None, None)),
        ("N/A", (None, None)),
    ],
)
def test_parse_exit_code(text: str, expected: tuple[int | None, int | None]) -> None:
    assert sp.parse_exit_code(text) == expected


# --- times -----------------------------------------------------------------------------------


def test_local_time_becomes_utc(berlin: None) -> None:
    # 10:00 in Berlin in summer (CEST, UTC+2) is 08:00 UTC; in winter (CET, UTC+1) 09:00.
    assert sp.parse_time("2024-07-01T10:00:00") == datetime(2024, 7, 1, 8, 0, tzinfo=UTC)
    assert sp.parse_time("2024-01-15T10:00:00") == datetime(2024, 1, 15, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize("text", ["Unknown", "None", "NONE", "N/A", "(null)", "", "0", "garbage"])
def test_no_time(text: str) -> None:
    assert sp.parse_time(text) is None


def test_epoch_seconds_as_rest_prints_them() -> None:
    assert sp.parse_time("1795948779") == datetime.fromtimestamp(1795948779, UTC)


# --- states ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "reason", "priority", "state", "held"),
    [
        ("PENDING", "Priority", 4294901720, JobState.PENDING, False),
        ("PENDING", "JobHeldUser", 0, JobState.PENDING, True),
        ("PENDING", "JobHeldAdmin", 0, JobState.PENDING, True),
        ("PENDING", "job requeued in held state", 0, JobState.PENDING, True),
        ("PENDING", "job_requeued_in_held_state", None, JobState.PENDING, True),  # scontrol -o
        ("PENDING", "launch failed requeued held", None, JobState.PENDING, True),
        ("PENDING", "BeginTime", 4294901737, JobState.PENDING, False),  # requeued after NODE_FAIL
        ("PENDING", "Resources", 0, JobState.PENDING, True),  # priority 0 is held, whatever the reason
        ("RUNNING", "None", 4294901720, JobState.RUNNING, False),
        ("COMPLETING", "None", 1, JobState.RUNNING, False),
        ("COMPLETING", "job requeued in held state", 0, JobState.PENDING, True),  # mid requeuehold
        ("CONFIGURING", "None", 1, JobState.RUNNING, False),
        ("SUSPENDED", "None", 1, JobState.RUNNING, False),
        ("RESIZING", "None", 1, JobState.RUNNING, False),
        ("COMPLETED", "None", 1, JobState.COMPLETED, False),
        ("FAILED", "NonZeroExitCode", 1, JobState.FAILED, False),
        ("OUT_OF_MEMORY", "OutOfMemory", 1, JobState.FAILED, False),
        ("CANCELLED", "None", 1, JobState.CANCELLED, False),
        ("CANCELLED by 0", "", None, JobState.CANCELLED, False),  # sacct
        ("CANCELLED by 1000", "", None, JobState.CANCELLED, False),
        ("REVOKED", "", None, JobState.CANCELLED, False),
        ("NODE_FAIL", "None", 1, JobState.NODE_FAIL, False),
        ("BOOT_FAIL", "", None, JobState.NODE_FAIL, False),
        ("TIMEOUT", "TimeLimit", 1, JobState.TIMEOUT, False),
        ("DEADLINE", "", None, JobState.TIMEOUT, False),
        ("PREEMPTED", "", None, JobState.PREEMPTED, False),
        ("REQUEUED", "", None, JobState.PENDING, False),
        ("REQUEUE_HOLD", "", None, JobState.PENDING, True),
        ("REQUEUE_FED", "", None, JobState.PENDING, False),
        ("SPECIAL_EXIT", "", None, JobState.PENDING, True),
        ("EXPEDITING", "", None, JobState.PENDING, False),  # an expedited requeue under way
        ("COMPLETING+EXPEDITING", "", None, JobState.PENDING, False),
        ("PD", "", None, JobState.PENDING, False),  # compact codes
        ("CG", "", None, JobState.RUNNING, False),
        ("NF", "", None, JobState.NODE_FAIL, False),
        ("PENDING+REQUEUE_HOLD", "", None, JobState.PENDING, True),  # flags, as newer JSON lists them
        ("SOMETHING_NEW", "", None, JobState.UNKNOWN, False),
    ],
)
def test_state_mapping(raw: str, reason: str, priority: int | None, state: JobState, held: bool) -> None:
    assert map_state(raw, reason, priority) == (state, held)


# --- squeue ----------------------------------------------------------------------------------


def squeue_jobs(release: str = "22.05") -> dict[str, facts.SqueueJob]:
    # The 22.05 capture predates the WorkDir field (22.05 prints absolute paths anyway).
    fields = [f for f in facts.SQUEUE_FIELDS if release != "22.05" or f != "WorkDir"]
    rows = sp.split_records(capture(f"squeue_{release}.txt"), DELIMS, fields)
    return {row["JobID"]: facts.squeue_job(row) for row in rows}


def test_squeue_25_11_relative_output_is_the_workdirs() -> None:
    """25.11's squeue prints the output pattern as given (`slurm-%j.out`) and STDERR `(null)`:
    the file is that pattern in the job's working directory, errors included."""
    jobs = squeue_jobs("25.11")
    failed = facts.observation(jobs["18"], excluded=[])
    assert failed.state == JobState.FAILED and failed.nodes == ["node1", "node2"]
    assert failed.output_path == failed.error_path == "/tmp/wt13a-xid/slurm-18.out"
    requeued = facts.observation(jobs["13"], excluded=["node4"])
    assert requeued.output_path == "/tmp/wt13a-smoke/slurm-13.out"


def test_squeue_rows_running_held_requeued_failed() -> None:
    jobs = squeue_jobs()
    assert sorted(jobs) == ["37", "38", "39", "40", "41", "42"]

    running = facts.observation(jobs["37"], excluded=[])
    assert (running.state, running.held, running.nodes) == (JobState.RUNNING, False, ["node1", "node2"])
    assert running.token == "recovery:run-a:0"
    assert running.output_path == "/tmp/sx/train-37.out"  # 22.05's squeue prints the pattern
    assert running.started_at is not None and running.ended_at is None  # EndTime NONE
    assert running.exit_code is None  # not ended: Slurm's 0 means nothing yet

    held = facts.observation(jobs["38"], excluded=["node4"])
    assert (held.state, held.held, held.reason, held.excluded_nodes) == (
        JobState.PENDING,
        True,
        "JobHeldUser",
        ["node4"],
    )
    assert held.started_at is None

    requeued = facts.observation(jobs["39"], excluded=[])
    assert (requeued.state, requeued.held, requeued.restart_count) == (JobState.PENDING, True, 1)
    assert requeued.started_at is None  # StartTime of a pending job is only an estimate

    failed = facts.observation(jobs["41"], excluded=[])
    assert (failed.state, failed.exit_code, failed.signal) == (JobState.FAILED, 3, None)
    assert failed.ended_at is not None
    killed = facts.observation(jobs["42"], excluded=[])
    assert (killed.state, killed.exit_code, killed.signal) == (JobState.FAILED, None, 9)


def test_a_name_cannot_forge_a_row_without_the_nonce() -> None:
    # Job 40's name and comment hold newlines and fake delimiters with a guessed nonce, and a
    # fake row claiming job 41 COMPLETED: they stay inside job 40's own fields.
    jobs = squeue_jobs()
    assert jobs["40"].name.startswith("evil\nname\x1f9999\x1fx")
    assert jobs["40"].comment.startswith("recovery\n2")
    assert jobs["41"].raw_state == "FAILED"


def test_completing_after_requeuehold_is_pending_and_held() -> None:
    row = dict.fromkeys(facts.SQUEUE_FIELDS, "")
    row |= {
        "JobID": "44",
        "State": "COMPLETING",
        "Reason": "job requeued in held state",
        "RestartCnt": "1",
        "PriorityLong": "0",
        "NodeList": "node1",
        "Name": "x",
    }
    job = facts.squeue_job(row)
    obs = facts.observation(job, excluded=[])
    assert (obs.state, obs.held, obs.restart_count, obs.nodes) == (JobState.PENDING, True, 1, [])
    assert job.exclusion_key is None  # about to be pending again: exclusions may change


def test_exclusions_are_fixed_only_for_running_or_ended_runs() -> None:
    jobs = squeue_jobs()
    assert jobs["37"].exclusion_key is not None
    assert jobs["41"].exclusion_key is not None
    assert jobs["38"].exclusion_key is None
    assert jobs["39"].exclusion_key is None


def test_squeue_format_prints_every_field_whole() -> None:
    fmt = facts.squeue_format(DELIMS, ["JobID", "Name"])
    assert fmt == f"JobID:{DELIMS.field},Name:{DELIMS.record}"


def test_fresh_delimiters_differ() -> None:
    assert sp.Delimiters.fresh() != sp.Delimiters.fresh()


# --- scontrol show job -o --------------------------------------------------------------------


def scontrol_lines() -> list[str]:
    return (OUTPUTS / "scontrol_22.05.txt").read_text().splitlines()


def test_scontrol_22_05() -> None:
    running, held, requeued, *_ = (sp.parse_scontrol_job(line) for line in scontrol_lines())
    assert running["JobState"] == "RUNNING" and running["Restarts"] == "0"
    assert running["NodeList"] == "node[1-2]" and running["BatchHost"] == "node1"
    assert running["ExcNodeList"] == "(null)"
    assert running["StdOut"] == "/tmp/sx/train-37.out"
    assert held["ExcNodeList"] == "node4" and held["Priority"] == "0"
    assert held["NodeList"] == ""
    assert requeued["Reason"] == "job_requeued_in_held_state" and requeued["Restarts"] == "1"
    assert requeued["ExitCode"] == "0:0"


def test_scontrol_newer_release_fields() -> None:
    # As 23.11/24.05 print it: ReqTRES/AllocTRES instead of TRES, TresPerNode after StdOut,
    # a reason with spaces written with underscores, and a key this parser does not know
    # (`NewField`) right after ExcNodeList.
    line = (
        "JobId=1234 JobName=train UserId=alice(1000) GroupId=alice(1000) MCS_label=N/A Priority=0 "
        "Nice=0 Account=proj QOS=normal JobState=PENDING Reason=job_requeued_in_held_state "
        "Dependency=(null) Requeue=1 Restarts=2 BatchFlag=1 Reboot=0 ExitCode=0:0 RunTime=00:00:00 "
        "TimeLimit=1-00:00:00 TimeMin=N/A SubmitTime=2024-06-01T09:00:00 EligibleTime=2024-06-01T09:00:10 "
        "AccrueTime=Unknown StartTime=Unknown EndTime=Unknown Deadline=N/A SuspendTime=None "
        "SecsPreSuspend=0 LastSchedEval=2024-06-01T09:00:00 Scheduler=Main Partition=gpu "
        "AllocNode:Sid=login1:4242 ReqNodeList=(null) ExcNodeList=gpu[02,07-08] NewField=x y NodeList= "
        "NumNodes=2-2 NumCPUs=16 NumTasks=2 CPUs/Task=8 ReqB:S:C:T=0:0:*:* "
        "ReqTRES=cpu=16,mem=64G,node=2,billing=16,gres/gpu=8 AllocTRES=(null) Socks/Node=* "
        "NtasksPerN:B:S:C=1:0:*:* CoreSpec=* MinCPUsNode=8 MinMemoryNode=32G MinTmpDiskNode=0 "
        "Features=(null) DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 Licenses=(null) "
        "Network=(null) Command=/home/alice/train.sbatch WorkDir=/home/alice/run "
        "Comment=recovery:policy=default,token=recovery:r1:0 StdErr=/home/alice/run/slurm-1234.out "
        "StdIn=/dev/null StdOut=/home/alice/run/slurm-1234.out TresPerNode=gres/gpu:4"
    )
    fields = sp.parse_scontrol_job(line, name="train")
    assert fields["JobState"] == "PENDING" and fields["Restarts"] == "2"
    assert sp.expand_hostlist(fields["ExcNodeList"]) == ["gpu02", "gpu07", "gpu08"]
    assert fields["Comment"] == "recovery:policy=default,token=recovery:r1:0"
    assert fields["ReqTRES"].startswith("cpu=16")
    assert fields["StdOut"] == "/home/alice/run/slurm-1234.out"


def test_scontrol_name_cannot_pose_as_fields() -> None:
    name = "x JobState=COMPLETED Restarts=9 ExcNodeList=node9"
    line = scontrol_lines()[1].replace("JobName=held ", f"JobName={name} ", 1)
    fields = sp.parse_scontrol_job(line, name=name)
    assert fields["JobName"] == name
    assert (fields["JobState"], fields["Restarts"], fields["ExcNodeList"]) == ("PENDING", "0", "node4")


def test_scontrol_name_with_a_newline() -> None:
    name = "line1\nline2"
    line = scontrol_lines()[1].replace("JobName=held ", f"JobName={name} ", 1)
    fields = sp.parse_scontrol_job(line, name=name)
    assert fields["JobName"] == name and fields["ExcNodeList"] == "node4"


# --- sacct -----------------------------------------------------------------------------------


def sacct() -> dict[str, list[facts.SacctRun]]:
    return facts.sacct_runs(sp.split_lines(capture("sacct_22.05.txt"), DELIMS.field, facts.SACCT_FIELDS))


def test_sacct_runs_one_record_per_run() -> None:
    runs = sacct()
    assert [len(runs[j]) for j in ("13", "15", "21")] == [2, 1, 2]
    # 13's second run is printed after job 15's rows: steps still go with their own run
    assert [s["JobIDRaw"] for s in runs["13"][0].steps] == ["13.batch"]
    assert runs["13"][1].steps == []


def test_sacct_observation_of_a_purged_job() -> None:
    obs = facts.sacct_observation("13", sacct()["13"])
    assert (obs.state, obs.restart_count, obs.exit_code, obs.scheduler_state) == (
        JobState.CANCELLED,
        1,
        3,
        "CANCELLED",
    )
    assert obs.nodes == []  # "None assigned"
    node_fail = facts.sacct_observation("21", sacct()["21"][:1])
    assert (node_fail.state, node_fail.nodes) == (JobState.NODE_FAIL, ["node1", "node2"])


def test_run_history_node_fail_then_completed() -> None:
    history = facts.run_history("21", sacct()["21"])
    assert [(r.restart_count, r.state) for r in history] == [
        (0, JobState.NODE_FAIL),
        (1, JobState.COMPLETED),
    ]
    assert history[1].nodes == ["node3", "node4"]
    requeued = facts.run_history("13", sacct()["13"])[0]  # REQUEUED after exiting 3
    assert (requeued.state, requeued.exit_code) == (JobState.FAILED, 3)


def test_tasks_batch_only_job_names_the_batch_host() -> None:
    tasks = facts.tasks_from_steps(sacct()["13"][0].steps)
    assert [(t.node, t.exit_code, t.signal) for t in tasks] == [("node1", 3, None)]


def test_tasks_multi_node_step_names_no_node() -> None:
    # 15.0 ran on node[1-2] and failed with 7: 22.05 keeps one code per step, so no node is
    # blamed, and the batch step (the script passing srun's failure on) is not counted.
    assert facts.tasks_from_steps(sacct()["15"][0].steps) == []


def test_tasks_single_node_steps_each_name_their_node() -> None:
    steps = [
        {"JobIDRaw": "50.batch", "NodeList": "node1", "ExitCode": "1:0", "End": "2024-01-01T00:00:09"},
        {"JobIDRaw": "50.0", "NodeList": "node1", "ExitCode": "0:0", "End": "2024-01-01T00:00:09"},
        {"JobIDRaw": "50.1", "NodeList": "node2", "ExitCode": "1:0", "End": "2024-01-01T00:00:05"},
        {"JobIDRaw": "50.extern", "NodeList": "node[1-2]", "ExitCode": "0:0", "End": "2024-01-01T00:00:09"},
    ]
    tasks = facts.tasks_from_steps(steps)
    assert [(t.node, t.exit_code) for t in tasks] == [("node1", 0), ("node2", 1)]


def test_split_lines_keeps_a_newline_inside_a_field() -> None:
    sep = "\x1fabc\x1f"
    text = f"1{sep}two\nlines{sep}2024-01-01T00:00:00\n2{sep}plain{sep}2024-01-01T00:00:01\n"
    rows = sp.split_lines(text, sep, ["id", "comment", "end"])
    assert rows == [
        {"id": "1", "comment": "two\nlines", "end": "2024-01-01T00:00:00"},
        {"id": "2", "comment": "plain", "end": "2024-01-01T00:00:01"},
    ]


# --- sinfo -----------------------------------------------------------------------------------


def test_sinfo_nodes_once_each_with_state_and_reason() -> None:
    rows = sp.split_records(capture("sinfo_22.05.txt"), DELIMS, facts.SINFO_FIELDS)
    nodes = facts.node_infos(rows)
    assert [(n.name, n.state, n.reason) for n in nodes] == [
        ("node1", "mixed", ""),
        ("node2", "mixed", ""),
        ("node3", "idle", ""),
        ("node4", "idle+drain", "maintenance: bad dimm"),
    ]
    assert facts.failed_nodes(["node3", "node4"], nodes) == ["node4"]
    assert all(n.addresses == ["127.0.0.1", "ci-host"] for n in nodes)  # NodeAddr, NodeHostname


@pytest.mark.parametrize(
    ("state", "unusable"),
    [
        ("idle", False),
        ("mixed", False),
        ("allocated", False),
        ("down+not_responding", True),
        ("down*", True),
        ("idle*", True),
        ("idle+drain", True),
        ("drained", True),
        ("mixed+drain", True),
        ("fail", True),
        ("allocated+completing", False),
        ("idle+planned", False),  # a newer release's flag
    ],
)
def test_node_unusable(state: str, unusable: bool) -> None:
    assert node_unusable(state) is unusable


# --- comments --------------------------------------------------------------------------------


def test_comment_formats() -> None:
    assert parse_comment("recovery").opted_in
    assert parse_comment("recovery:policy=fast").policy == "fast"
    both = parse_comment("recovery:policy=fast,token=recovery:run-1:0")
    assert (both.policy, both.token, both.run_id) == ("fast", "recovery:run-1:0", "run-1")
    assert parse_comment("recovery:token=a,b:c").token == "a,b:c"  # the token takes the rest
    assert not parse_comment("recovery-test").opted_in
    assert not parse_comment("my job").opted_in
    assert not parse_comment("").opted_in
    assert parse_comment(format_comment("t:1", "p")) == parse_comment("recovery:policy=p,token=t:1")


def test_submission_keeps_the_scripts_policy() -> None:
    script = "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --comment=recovery:policy=gpu-big\nsrun train\n"
    assert script_comment(script) == "recovery:policy=gpu-big"
    assert submission_comment(script, "recovery:r:0") == "recovery:policy=gpu-big,token=recovery:r:0"
    # an #SBATCH line after the first command is not read by sbatch, nor here
    late = "#!/bin/bash\necho hi\n#SBATCH --comment=recovery:policy=x\n"
    assert submission_comment(late, "t") == "recovery:token=t"


# --- output paths and srun's lines -----------------------------------------------------------


def test_expand_output_path() -> None:
    kw = {"job_id": "37", "name": "train", "user": "alice", "node": "node1"}
    assert sp.expand_output_path("/tmp/%x-%j.out", **kw) == "/tmp/train-37.out"
    assert sp.expand_output_path("/o/%u/%N.%5j", **kw) == "/o/alice/node1.00037"
    assert sp.expand_output_path("/o/100%%", **kw) == "/o/100%"
    assert sp.expand_output_path("/o/%A_%a.out", **kw, array_job_id="30", array_task_id="7") == "/o/30_7.out"
    assert sp.expand_output_path("/o/a\\%j", **kw) == "/o/a\\%j"  # a backslash: literal
    assert sp.expand_output_path("slurm-%j.out", **kw, workdir="/w") == "/w/slurm-37.out"
    assert sp.expand_output_path("(null)", **kw) == ""


def test_srun_failure_lines() -> None:
    text = (
        "fail on node2\n"
        "srun: error: node2: task 1: Exited with exit code 7\n"
        "srun: error: node1: task 0: Terminated\n"
        "srun: error: Node failure on node3\n"
        "srun: error: node4: tasks 2-3: Killed\n"
    )
    got = [(f.node, f.exit_code, f.signal, f.node_failure) for f in sp.parse_srun_failures(text)]
    assert got == [
        ("node2", 7, None, False),
        ("node1", None, 15, False),
        ("node3", None, None, True),
        ("node4", None, 9, False),
    ]
