"""SlurmScheduler's command use, with a fake runner in place of Slurm: which commands run, with
which arguments, how often, and how failures become scheduler errors."""

from __future__ import annotations

import os
import pwd
import re
from collections.abc import Callable, Mapping, Sequence

import pytest

from recovery.activities.schedulers import slurm_facts as facts
from recovery.activities.schedulers.base import JobNotFound, JobNotRequeueable, SchedulerError, SchedulerUnavailable
from recovery.activities.schedulers.slurm import SlurmScheduler, parse_parsable, sbatch_options
from recovery.activities.schedulers.slurm_commands import Completed, message, slurm_env
from recovery.workflows.models import JobState, SubmitRequest

Answer = Callable[[list[str]], Completed]


class FakeSlurm:
    """Answers commands from a table of `(argv[0], argv[1]) -> answer`, and records each call."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.answers: dict[str, Answer] = {}
        self.envs: list[Mapping[str, str]] = []

    async def __call__(
        self, argv: Sequence[str], *, input: bytes | None, env: Mapping[str, str], timeout: float
    ) -> Completed:
        argv = list(argv)
        self.calls.append(argv)
        self.envs.append(env)
        key = argv[0] if argv[0] != "scontrol" else f"scontrol {argv[1]}"
        return self.answers[key](argv)

    def commands(self) -> list[str]:
        return [c[0] if c[0] != "scontrol" else f"scontrol {c[1]}" for c in self.calls]


def ok(stdout: str = "", stderr: str = "") -> Answer:
    return lambda argv: Completed(argv, 0, stdout, stderr)


def fail(stderr: str, rc: int = 1) -> Answer:
    return lambda argv: Completed(argv, rc, "", stderr)


def squeue_answer(rows: list[dict[str, str]], excluded: dict[str, str] | None = None) -> Answer:
    """Print rows in the format and with the delimiters the adapter asked for: `-O` (the job
    table) or `-o '%A<F>%x<R>'` (exclusion lists, from `excluded`)."""

    def answer(argv: list[str]) -> Completed:
        if "-o" in argv:
            fmt = argv[argv.index("-o") + 1]
            field, record = fmt[2 : fmt.index("%x")], fmt[fmt.index("%x") + 2 :]
            wanted = argv[argv.index("-j") + 1].split(",")
            ids = [r["JobID"] for r in rows if r["JobID"] in wanted]
            out = "".join(f"{i}{field}{(excluded or {}).get(i, '')}{record}\n" for i in ids)
            return Completed(argv, 0, out, "")
        fmt = argv[argv.index("-O") + 1]
        fields = [m.group(1) for m in re.finditer(r"(?:^|,)([A-Za-z_]+):", fmt)]
        ends = [part.split(":", 1)[1] for part in fmt.split(",")]
        out = ""
        for row in rows:
            out += "".join(row.get(f, "") + end for f, end in zip(fields, ends, strict=True)) + "\n"
        return Completed(argv, 0, out, "")

    return answer


def row(job_id: str, state: str, **kw: str) -> dict[str, str]:
    base = dict.fromkeys(facts.SQUEUE_FIELDS, "")
    base |= {
        "JobID": job_id,
        "State": state,
        "Reason": "None",
        "RestartCnt": "0",
        "PriorityLong": "100",
        "exit_code": "0",
        "SubmitTime": "2024-01-01T00:00:00",
        "StartTime": "2024-01-01T00:00:01",
        "EndTime": "NONE",
        "Partition": "debug",
        "UserName": "root",
        "Name": f"job{job_id}",
        "Comment": "(null)",
    }
    return base | kw


@pytest.fixture
def fake() -> FakeSlurm:
    return FakeSlurm()


@pytest.fixture
def slurm(fake: FakeSlurm) -> SlurmScheduler:
    return SlurmScheduler(conf="/etc/test/slurm.conf", runner=fake, env={"PATH": "/usr/bin"})


async def test_many_running_jobs_are_one_squeue_after_the_first_poll(fake: FakeSlurm, slurm: SlurmScheduler) -> None:
    ids = [str(i) for i in range(100, 150)]
    fake.answers["squeue"] = squeue_answer([row(i, "RUNNING", NodeList="node1") for i in ids], {"100": "node4"})

    first = await slurm.observe(ids)
    assert len(first) == 50 and first["100"].excluded_nodes == ["node4"]
    assert fake.commands() == ["squeue", "squeue"]  # the table, then every exclusion list at once
    fake.calls.clear()

    again = await slurm.observe(ids)
    assert fake.commands() == ["squeue"]
    assert again["100"].excluded_nodes == ["node4"] and again["101"].excluded_nodes == []

    fake.calls.clear()
    await slurm.observe(ids, fresh=True)
    assert fake.commands() == ["squeue", "squeue"]


async def test_pending_jobs_exclusions_are_read_every_time(fake: FakeSlurm, slurm: SlurmScheduler) -> None:
    excluded = {"7": "node2"}
    rows = [row("7", "PENDING", Reason="JobHeldUser", PriorityLong="0"), row("9", "PENDING")]
    fake.answers["squeue"] = squeue_answer(rows, excluded)
    assert (await slurm.observe(["7", "9"]))["7"].excluded_nodes == ["node2"]
    excluded["7"] = "node[2-3]"
    obs = (await slurm.observe(["7", "9"]))["7"]
    assert obs.excluded_nodes == ["node2", "node3"] and obs.held
    assert fake.commands() == ["squeue"] * 4


async def test_detail_reads_scontrol_and_sees_a_requeue_squeue_missed(fake: FakeSlurm, slurm: SlurmScheduler) -> None:
    fake.answers["squeue"] = squeue_answer([row("8", "RUNNING", NodeList="node1")])

    def requeued(argv: list[str]) -> Completed:
        line = (
            "JobId=8 JobName=job8 UserId=root(0) Priority=0 JobState=PENDING "
            "Reason=job_requeued_in_held_state Restarts=1 ExitCode=0:0 SubmitTime=2024-01-01T00:01:00 "
            "StartTime=Unknown EndTime=Unknown Partition=debug ExcNodeList=node3 NodeList= BatchHost=n/a"
        )
        return Completed(argv, 0, line, "")

    fake.answers["scontrol show"] = requeued
    obs = await slurm.detail("8")
    assert obs is not None
    assert (obs.state, obs.held, obs.restart_count, obs.reason, obs.excluded_nodes) == (
        JobState.PENDING,
        True,
        1,
        "job requeued in held state",
        ["node3"],
    )
    assert fake.commands() == ["squeue", "scontrol show"]


async def test_unknown_jobs_come_from_accounting_in_one_call(fake: FakeSlurm, slurm: SlurmScheduler) -> None:
    fake.answers["squeue"] = fail("slurm_load_jobs error: Invalid job id specified")

    def sacct(argv: list[str]) -> Completed:
        sep = argv[argv.index("-D") + 1].removeprefix("--delimiter=")
        values = ["5", "5", "COMPLETED", "0:0", "node1", "debug", "root", "None", "j", "", "", "", ""]
        return Completed(argv, 0, sep.join(values) + "\n", "")

    fake.answers["sacct"] = sacct
    found = await slurm.observe(["5", "6"])
    assert list(found) == ["5"] and found["5"].state is JobState.COMPLETED
    assert fake.commands() == ["squeue", "sacct"]


async def test_a_cluster_without_accounting_has_no_history_and_no_error(fake: FakeSlurm, slurm: SlurmScheduler) -> None:
    """What 22.05's sacct prints (exit 1) with AccountingStorageType=accounting_storage/none."""
    fake.answers["squeue"] = squeue_answer([])
    fake.answers["sacct"] = fail("Slurm accounting storage is disabled")
    assert await slurm.observe(["41"]) == {}
    assert await slurm.runs("41") == []
    assert await slurm.find("no-such-token") is None


async def test_invalid_ids_never_reach_slurm(fake: FakeSlurm, slurm: SlurmScheduler) -> None:
    assert await slurm.observe(["1,2", "-h", "$(id)"]) == {}
    assert fake.calls == []
    with pytest.raises(JobNotFound):
        await slurm.requeue_hold("5;id")


@pytest.mark.parametrize(
    ("stderr", "rc", "error"),
    [
        (
            "slurm_load_jobs error: Unable to contact slurm controller (connect failure)",
            1,
            SchedulerUnavailable,
        ),
        ("Unexpected message received for job 13", 1, SchedulerUnavailable),  # requeuehold, ctld down
        (
            "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation",
            1,
            SchedulerUnavailable,
        ),
        ("scontrol: error: Zero Bytes were transmitted or received", 1, SchedulerUnavailable),
        ("Invalid job id specified for job 99999", 1, JobNotFound),
        (
            "scancel: Terminating job 99999\nscancel: error: Kill job error on job id 99999: Invalid job id specified",
            0,
            JobNotFound,
        ),
        ("Job is no longer pending execution for job 17", 1, SchedulerError),
        ("Requested operation is presently disabled for job 3", 1, SchedulerError),  # not a requeue
    ],
)
async def test_errors_are_classified(
    fake: FakeSlurm, slurm: SlurmScheduler, stderr: str, rc: int, error: type[SchedulerError]
) -> None:
    fake.answers["scancel"] = fail(stderr, rc)
    with pytest.raises(error) as caught:
        await slurm.cancel("17")
    assert type(caught.value) is error
    assert "\n" not in str(caught.value)


async def test_requeue_of_a_no_requeue_job_is_not_requeueable(fake: FakeSlurm, slurm: SlurmScheduler) -> None:
    fake.answers["scontrol requeuehold"] = fail("Requested operation is presently disabled for job 85")
    with pytest.raises(JobNotRequeueable):
        await slurm.requeue_hold("85")


async def test_mutations_are_one_command_each(fake: FakeSlurm, slurm: SlurmScheduler) -> None:
    for key in ("scontrol requeuehold", "scontrol update", "scontrol release", "scancel"):
        fake.answers[key] = ok()
    await slurm.requeue_hold("9")
    await slurm.set_excluded_nodes("9", ["node2", "gpu[01-02]"])
    await slurm.set_excluded_nodes("9", [])
    await slurm.release("9")
    await slurm.cancel("9")
    assert fake.calls == [
        ["scontrol", "requeuehold", "9"],
        ["scontrol", "update", "JobId=9", "ExcNodeList=node2,gpu[01-02]"],
        ["scontrol", "update", "JobId=9", "ExcNodeList="],
        ["scontrol", "release", "9"],
        ["scancel", "-v", "9"],
    ]
    with pytest.raises(SchedulerError):
        await slurm.set_excluded_nodes("9", ["node1 Partition=x"])


async def test_submit_passes_hostile_text_as_single_arguments(fake: FakeSlurm, slurm: SlurmScheduler) -> None:
    fake.answers["sbatch"] = ok("4242\n")
    fake.answers["squeue"] = squeue_answer([row("4242", "PENDING")])
    name = "a'b;$(touch /tmp/pwned)\"c\nd"
    request = SubmitRequest(
        script="#!/bin/bash\ntrue\n",
        args=["x y", "$(id)"],
        name=name,
        nodes=2,
        workdir="/w d",
        token="recovery:r:0",
        excluded_nodes=["node3"],
        env={"A": "1,2 3", "SBATCH_PARTITION": "other", "SLURM_CONF": "/elsewhere"},
    )
    obs = await slurm.submit(request)
    assert obs.job_id == "4242"
    argv = fake.calls[0]
    assert argv[:10] == [
        "sbatch",
        "--parsable",
        f"--job-name={name}",
        "--nodes=2",
        "--chdir=/w d",
        "--comment=recovery:token=recovery:r:0",
        "--open-mode=append",
        "--requeue",
        "--export=ALL",
        "--exclude=node3",
    ]
    assert argv[-2:] == ["x y", "$(id)"]
    env = fake.envs[0]
    assert env["A"] == "1,2 3" and env["SLURM_CONF"] == "/etc/test/slurm.conf"
    assert "SBATCH_PARTITION" not in env


def test_sbatch_without_exclusions_has_no_exclude() -> None:
    request = SubmitRequest(script="true", name="n", nodes=1, workdir="/w", token="t")
    assert not any(a.startswith("--exclude") for a in sbatch_options(request))


def test_resubmission_keeps_output_and_owner() -> None:
    """A resubmission appends to the failed job's output file and, from root, runs as its owner."""
    request = SubmitRequest(script="true", name="n", nodes=1, workdir="/w", token="t", output="/w/slurm-7.out")
    argv = sbatch_options(request, as_user="nobody")
    assert "--output=/w/slurm-7.out" in argv and "--open-mode=append" in argv
    nobody = pwd.getpwnam("nobody")
    assert f"--uid={nobody.pw_uid}" in argv and f"--gid={nobody.pw_gid}" in argv
    plain = sbatch_options(SubmitRequest(script="true", name="n", nodes=1, workdir="/w", token="t"))
    assert not any(a.startswith(("--output", "--uid")) for a in plain)


def test_submit_as_another_user_is_root_only() -> None:
    slurm = SlurmScheduler(conf="/c")
    me = pwd.getpwuid(os.geteuid()).pw_name
    assert slurm.submit_as_refusal("") is None and slurm.submit_as_refusal(me) is None
    refusal = slurm.submit_as_refusal("nobody")
    assert (refusal is None) == (os.geteuid() == 0)
    if refusal is not None:
        assert "only root" in refusal and "\n" not in refusal


@pytest.mark.parametrize(("stdout", "job_id"), [("42\n", "42"), ("42;cluster\n", "42"), ("17_3\n", "17_3")])
def test_parse_parsable(stdout: str, job_id: str) -> None:
    assert parse_parsable(stdout) == job_id


def test_parse_parsable_rejects_noise() -> None:
    with pytest.raises(SchedulerError):
        parse_parsable("Submitted batch job\n")


def test_env_drops_output_shaping_variables() -> None:
    env = slurm_env("/c", {"PATH": "/bin", "SQUEUE_FORMAT": "%i", "SLURM_TIME_FORMAT": "relative", "SLURM_JWT": "x"})
    assert env == {"PATH": "/bin", "SLURM_CONF": "/c", "SLURM_TIME_FORMAT": "standard"}


def test_message_is_one_line_without_prefixes() -> None:
    result = Completed(["sbatch"], 1, "", "sbatch: error: Batch job submission failed: Invalid account\n")
    assert message(result) == "Batch job submission failed: Invalid account"
