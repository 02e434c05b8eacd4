"""The vocabulary of `recovery`, as the models workflows and activities share.

Everything that crosses the workflow/activity boundary is one of these models, serialised by
Temporal's pydantic data converter. Times are timezone-aware UTC datetimes and serialise as
ISO 8601. Names follow `docs/architecture.md` and the public JSON contract: a field that appears
in `recovery status --json` keeps its name forever.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from recovery.workflows.policy import SharedPolicy, SuspectNodes

# The run's workflow type (the public contract; running histories are of this type). Here rather
# than beside the workflow so the client and the worker's gauges name it without loading it.
TRAINING_RUN = "TrainingRun"


class Model(BaseModel):
    """Base for every shared model: unknown fields are an error, values are validated on assignment."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


_M = TypeVar("_M", bound=Model)


class JobState(StrEnum):
    """The state of a job as the scheduler reports it, in Slurm's words.

    PENDING    queued, or held (see `JobObservation.held`), not yet on nodes.
    RUNNING    allocated; its tasks are running.
    COMPLETED  every task exited 0.
    FAILED     a task exited non-zero or was killed by a signal.
    CANCELLED  cancelled by a user or by `recovery`.
    NODE_FAIL  a node of the allocation failed; the scheduler says so, not the job's own tasks.
    TIMEOUT    the job reached its time limit.
    PREEMPTED  the scheduler took the allocation for other work.
    UNKNOWN    the scheduler no longer knows the job (record purged) or answered something new.
    """

    PENDING = "PENDING"
    RUNNING = "RUNNING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"
    NODE_FAIL = "NODE_FAIL"
    TIMEOUT = "TIMEOUT"
    PREEMPTED = "PREEMPTED"
    UNKNOWN = "UNKNOWN"

    @property
    def ended(self) -> bool:
        return self not in (JobState.PENDING, JobState.RUNNING)


class RunState(StrEnum):
    """`RecoveryState`: where a run stands, as the search attribute and `list` show it."""

    PENDING = "pending"
    RUNNING = "running"
    RECOVERING = "recovering"
    PAUSED = "paused"
    COMPLETED = "completed"
    GAVE_UP = "gave_up"
    CANCELLED = "cancelled"

    @property
    def finished(self) -> bool:
        """The run is over: completed, gave up or cancelled. Nothing more happens to it."""
        return self in (RunState.COMPLETED, RunState.GAVE_UP, RunState.CANCELLED)


SymptomKind = Literal["crash", "hang", "straggler"]
Category = Literal[
    "hardware",
    "network",
    "application",
    "out_of_memory",
    "scheduler",
    "system_software",
    "unknown",
]
Operation = Literal["restart", "terminate", "give_up"]
AdviceStatus = Literal["pending", "converged", "abandoned"]
ActionKind = Literal["submit", "requeue_hold", "set_excluded_nodes", "release", "cancel", "drain_node"]
# The points a run's story and its latencies are measured between (docs/architecture.md).
MilestoneName = Literal[
    "progress_started",  # the first attempt's first progress step
    "failure_observed",  # when an attempt failed (or stopped progressing, or began to straggle)
    "symptom_detected",
    "advice_recorded",
    "first_action",  # the first scheduler command carried out for an advice
    "successor_running",
    "progress_restored",  # a successor's first progress step
    "completed",
    "gave_up",
    "cancelled",
]


# --- scheduler facts -------------------------------------------------------------------------


class TaskResult(Model):
    """How one node's copy of the batch script (or one task) ended."""

    node: str
    exit_code: int | None = None
    signal: int | None = None
    ended_at: datetime | None = None


class JobObservation(Model):
    """One fresh read of a job from the scheduler. `restart_count` with `job_id` names the attempt."""

    job_id: str
    name: str = ""
    state: JobState
    held: bool = False
    reason: str = ""
    nodes: list[str] = Field(default_factory=list)
    excluded_nodes: list[str] = Field(default_factory=list)
    exit_code: int | None = None
    signal: int | None = None
    restart_count: int = 0
    submitted_at: datetime | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    output_path: str | None = None
    error_path: str | None = None
    tasks: list[TaskResult] = Field(default_factory=list)
    failed_nodes: list[str] = Field(default_factory=list)
    token: str = ""
    # What the scheduler itself said, for evidence and discovery (empty where it has no such thing):
    # its own state word (e.g. Slurm's OUT_OF_MEMORY, `CANCELLED by 0`), the job's comment
    # (Slurm's opt-in marker), partition and owner.
    scheduler_state: str = ""
    comment: str = ""
    partition: str = ""
    user: str = ""


class JobSubmission(Model):
    """What adopting a job submitted outside recovery needs: enough to resubmit it if required."""

    job_id: str
    name: str
    user: str
    workdir: str
    nodes: int = Field(ge=1)
    script: str
    comment: str = ""
    partition: str = ""


class NodeInfo(Model):
    name: str
    state: str
    reason: str = ""
    # Where the node answers on the network (Slurm's NodeAddr and NodeHostname, then what its
    # names resolve to): a log names a host or a failed peer so, attribution needs the node.
    addresses: list[str] = Field(default_factory=list)


class SubmitRequest(Model):
    """What the scheduler needs to start a job. `token` makes a retried submit find its own job."""

    script: str
    args: list[str] = Field(default_factory=list)
    name: str
    nodes: int = Field(ge=1)
    workdir: str
    token: str
    excluded_nodes: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    # sbatch's own options the user wrote before the script, as typed (client/submit_argv.py)
    sbatch_options: list[str] = Field(default_factory=list)
    # A resubmission keeps the failed job's output file (appended to) and its owner; empty: the
    # scheduler's default output, and the worker's own user.
    output: str = ""
    user: str = ""
    # A pipeline's stage is submitted held and released by the pipeline (`dag_release`) once its
    # needs completed. `labels` say why, for operators: Slurm keeps them in the job's comment
    # beside the token (`squeue -O Comment`), the local scheduler in the held job's reason.
    hold: bool = False
    labels: dict[str, str] = Field(default_factory=dict)


# --- the run ---------------------------------------------------------------------------------


class RunSpec(Model):
    """What the user asked for: fixed for the life of the run."""

    run_id: str
    name: str
    scheduler: str
    script_path: str
    script: str
    args: list[str] = Field(default_factory=list)
    nodes: int = Field(ge=1)
    workdir: str
    owner: str
    policy: SharedPolicy
    env: dict[str, str] = Field(default_factory=dict)
    submitted_at: datetime
    tuning: Tuning = Field(default_factory=lambda: Tuning())
    adopt_job_id: str | None = None  # a job already submitted (sbatch, opt-in), instead of submitting
    sbatch_options: list[str] = Field(default_factory=list)  # passed on to every sbatch of the run

    def token(self, index: int) -> str:
        """The token of the run's attempt `index`: a retried submit (or a stage's run adopting
        the job its pipeline submitted held) finds its job by it."""
        return f"recovery:{self.run_id}:{index}"

    def submit_request(self, index: int, excluded: list[str], output: str = "", user: str = "") -> SubmitRequest:
        """What submitting the run's script as attempt `index` asks of the scheduler."""
        return SubmitRequest(
            script=self.script,
            args=self.args,
            name=self.name,
            nodes=self.nodes,
            workdir=self.workdir,
            token=self.token(index),
            excluded_nodes=excluded,
            env=self.env,
            sbatch_options=self.sbatch_options,
            output=output,
            user=user,
        )


class Attempt(Model):
    index: int
    job_id: str
    restart_count: int = 0
    state: JobState = JobState.PENDING
    exit_code: int | None = None
    signal: int | None = None
    nodes: list[str] = Field(default_factory=list)
    excluded_nodes: list[str] = Field(default_factory=list)
    submitted_at: datetime | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    output_path: str | None = None
    partition: str = ""
    log_offset: int = 0  # where this attempt's output starts in an output file kept across requeues
    first_step: int | None = None  # the first progress step this attempt reported
    last_step: int | None = None  # the highest step it reported before it ended
    step_seconds: float | None = None  # its typical step time, as its log showed it (for goodput)


class Evidence(Model):
    """One fact that supports a symptom or diagnosis: a log line, or something the scheduler said."""

    source: str
    text: str
    line: int | None = None
    node: str | None = None
    signature: str | None = None


class Symptom(Model):
    attempt_index: int
    kind: SymptomKind
    detected_at: datetime
    failed_at: datetime | None = None  # a crash's end; when a hang's progress stopped; when a slowdown began
    evidence: list[Evidence] = Field(default_factory=list)
    slowdown: float | None = None  # a straggler: the share of its healthy pace it lost (0.8: it ran at a fifth)


class ImplicatedNode(Model):
    node: str
    reason: str


class Diagnosis(Model):
    attempt_index: int
    category: Category
    retryable: bool
    implicated: list[ImplicatedNode] = Field(default_factory=list)
    explanation: str
    provider: str
    evidence: list[Evidence] = Field(default_factory=list)
    confidence: float | None = None
    # Peers (address or host name) the log says the failure involved, as written there:
    # attribution maps them to nodes of the allocation (`activities.rules.with_peer_nodes`).
    peers: list[str] = Field(default_factory=list)

    @property
    def implicated_nodes(self) -> list[str]:
        return [i.node for i in self.implicated]


class Advice(Model):
    """The decision for one failed attempt: recorded first, then carried out, then verified."""

    generation: int
    attempt_index: int
    operation: Operation
    excluded_nodes: list[str] = Field(default_factory=list)
    not_before: datetime | None = None
    reason: str
    explanation: str
    status: AdviceStatus = "pending"
    status_reason: str = ""
    acted: bool = False
    created_at: datetime
    resolved_at: datetime | None = None


class Action(Model):
    """One scheduler command issued (or found already done) for an advice."""

    advice_generation: int
    kind: ActionKind
    job_id: str
    at: datetime
    changed: bool
    detail: str = ""


class Milestone(Model):
    """One point of a run's story (`MilestoneName`): recovery latency is measured between them."""

    name: MilestoneName
    at: datetime
    attempt_index: int | None = None
    detail: str = ""


class Goodput(Model):
    """Where a run's time went, from its first attempt's start to its end (or now).

    Lost, per failure: `detection` (the attempt failed, or stopped making progress, until the
    symptom was detected; for a straggler, the share of its pace it lost while slow), `restart`
    (detected until the successor ran) and `recompute` (the steps the successor redid since the
    last checkpoint: the failed attempt's last step minus the step the successor resumed from,
    times the step time). `ettr`, the effective training
    time ratio, is productive / elapsed."""

    elapsed_seconds: float = 0.0
    productive_seconds: float = 0.0
    lost_seconds: float = 0.0
    lost_detection_seconds: float = 0.0
    lost_restart_seconds: float = 0.0
    lost_recompute_seconds: float = 0.0
    recomputed_steps: int = 0
    failures: int = 0
    ettr: float | None = None


# The milestone that ends a run, for each finished state.
FINAL_MILESTONE: dict[RunState, MilestoneName] = {
    RunState.COMPLETED: "completed",
    RunState.GAVE_UP: "gave_up",
    RunState.CANCELLED: "cancelled",
}


class RunSummary(Model):
    """A run as `list --json` shows it."""

    id: str
    name: str
    state: RunState
    paused: bool
    owner: str
    policy: str
    attempts: int
    scheduler: str
    job_id: str | None
    last_symptom: str | None = None
    created_at: datetime | None = None
    kind: Literal["run", "pipeline"] = "run"  # a pipeline's row counts its started stages as attempts
    pipeline: str | None = None  # for a pipeline's stage: the pipeline's id


class RunStatus(Model):
    """`status RUN --json`, and the workflow's `status` query."""

    run: RunSummary
    attempts: list[Attempt]
    symptoms: list[Symptom]
    diagnoses: list[Diagnosis]
    advice: list[Advice]
    actions: list[Action]
    milestones: list[Milestone]
    goodput: Goodput


# --- activity inputs -------------------------------------------------------------------------


class SubmitInput(Model):
    run_id: str
    attempt_index: int
    request: SubmitRequest


class WatchInput(Model):
    run_id: str
    attempt: Attempt
    poll_seconds: float
    policy: SharedPolicy
    report_progress: bool = True  # return at the attempt's first progress (for its milestone)


class AdoptInput(Model):
    run_id: str
    job_id: str


class AttemptEndInput(Model):
    """After a restart stopped an attempt that was still running (a hang or a straggler): read
    what it wrote until it really ended, from `log_offset` (where its watch stopped reading)."""

    run_id: str
    attempt: Attempt
    log_offset: int
    last_step: int | None = None
    timeout_seconds: float
    poll_seconds: float


class AttemptEnd(Model):
    """Where the stopped attempt's output ends (the successor's starts) and its last step."""

    log_offset: int
    last_step: int | None = None


class AwaitRequeueInput(Model):
    """Observe mode: wait, bounded, for someone else (Slurm, an operator) to run the job again."""

    run_id: str
    attempt: Attempt
    timeout_seconds: float
    poll_seconds: float


class WatchResult(Model):
    """Why the watch returned: the attempt `ended`, made its first `progress`, or is stuck
    (`hang`) or slow (`straggler`) while still running."""

    event: Literal["ended", "progress", "hang", "straggler"] = "ended"
    observation: JobObservation
    symptom: Symptom | None = None
    log_diagnosis: Diagnosis | None = None
    log_offset: int = 0
    first_step: int | None = None
    first_step_at: datetime | None = None
    last_step: int | None = None
    step_seconds: float | None = None


class HangStacksInput(Model):
    """Collect the stacks of a hung attempt's ranks, on each of its nodes, while it still runs."""

    run_id: str
    attempt_index: int
    job_id: str
    nodes: list[str]


class HangStacks(Model):
    """What the ranks of a hung attempt were doing (`activities.hangstacks`), and whose fault the
    hang is by that evidence. `collected` False: nothing was tried (switched off, or a scheduler
    it cannot reach into), and `summary` says why. `evidence`: the verdict, then one line per
    distinct stack (the ranks sharing it), then what could not be read."""

    collected: bool
    summary: str
    culprits: list[ImplicatedNode] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)


class DiagnoseInput(Model):
    run_id: str
    attempt: Attempt
    observation: JobObservation
    symptom: Symptom
    log_diagnosis: Diagnosis | None = None
    suspect_nodes: list[str] = Field(default_factory=list)
    hang_stacks: HangStacks | None = None  # a hang: its ranks' stacks, taken before it was stopped
    # The run's exclusions so far. Given, the result counts the usable nodes and names only those
    # `decide` may exclude (these, the implicated and the suspects), not all 10,000 of a cluster.
    excluded_nodes: list[str] | None = None
    # Given (patch `suspects-in-diagnose`), diagnose asks the cluster's node history for the
    # suspects under this rule, as of the symptom's detection, beside its own work, and returns
    # them (`DiagnoseResult.suspect_nodes`); `suspect_nodes` above is then not used.
    suspect_rule: SuspectNodes | None = None


class AttributionInput(Model):
    """Everything an attribution provider sees (and the `http` provider POSTs as JSON)."""

    run_id: str
    attempt: Attempt
    observation: JobObservation  # how the failed run ended, from the scheduler
    symptom: Symptom
    log_diagnosis: Diagnosis | None = None  # the log's own account, when it has one
    nodes: list[NodeInfo] = Field(default_factory=list)  # every node and its state now
    suspect_nodes: list[str] = Field(default_factory=list)  # nodes that keep failing across runs


class RecordAdviceInput(Model):
    run_id: str
    advice: Advice
    partition: str = ""  # a worker may only observe in some partitions
    failed_at: datetime | None = None  # when the attempt failed: the failure -> advice latency metric
    job_id: str | None = None  # the failed attempt's job, for the activity's log lines


class JobActionInput(Model):
    """Input to the idempotent restart steps: act only if the job is still at `restart_count`."""

    run_id: str
    advice_generation: int
    job_id: str
    restart_count: int
    excluded_nodes: list[str] = Field(default_factory=list)
    attempt_index: int | None = None  # the failed attempt, for the activity's log lines


class VerifyInput(Model):
    """Wait for `job_id` to run at `successor_restart_count` (or later) off the excluded nodes."""

    run_id: str
    job_id: str
    successor_restart_count: int
    excluded_nodes: list[str]
    timeout_seconds: float
    poll_seconds: float
    failed_at: datetime | None = None  # when the failed attempt failed: the failure -> successor metric
    attempt_index: int | None = None  # the successor's index, for the activity's log lines


class VerifyResult(Model):
    ok: bool
    observation: JobObservation | None = None
    reason: str = ""


class CancelInput(Model):
    run_id: str
    job_id: str


RestartVia = Literal["requeue", "resubmit"]


class RestartPlanInput(Model):
    """Policy `restart_via` and what the worker checks before a restart that may resubmit: the
    owner it would submit as, and (for `auto`) whether the allocation fits on free nodes now."""

    run_id: str
    job_id: str
    restart_via: Literal["resubmit", "auto"]
    owner: str
    nodes: int = Field(ge=1)
    partition: str = ""
    excluded_nodes: list[str] = Field(default_factory=list)
    released_nodes: list[str] = Field(default_factory=list)  # the failed job's, free once it is cancelled


class RestartPlan(Model):
    via: RestartVia
    reason: str  # one line: why this way (shown with the run's actions)


class Tuning(Model):
    """How often to look and how long to wait; chosen per scheduler when the run is submitted."""

    poll_seconds: float = Field(default=0.25, gt=0)
    heartbeat_timeout_seconds: float = Field(default=10.0, gt=0)
    verify_timeout_seconds: float = Field(default=120.0, gt=0)
    action_timeout_seconds: float = Field(default=30.0, gt=0)
    history_events_limit: int = Field(default=5000, ge=10)
    # The watch's own heartbeat timeout (None: heartbeat_timeout_seconds): how long a lost
    # worker's watches wait before they move to a live one, and what an idle run costs (a
    # heartbeat every 0.8 of it). Runs before the observer used heartbeat_timeout_seconds.
    watch_heartbeat_timeout_seconds: float | None = Field(default=None, gt=0)
    # The run's safety net: a watch that brought no news this long (to 1.5 times it, spread per
    # run) is re-armed, and the observer judges the attempt again from the scheduler's state
    # then. Each re-arm is two workflow tasks: at 10,000 runs, an hour makes 2.2 a second.
    watch_rearm_seconds: float = Field(default=3600.0, gt=0)


class DiagnoseResult(Model):
    diagnosis: Diagnosis
    # The cluster's usable nodes (None: unknown): every one, or with `usable_count` set, only the
    # usable ones among those the run could exclude (results from before it named every one).
    usable_nodes: list[str] | None = None
    usable_count: int | None = None
    failed_run: JobObservation | None = None  # how the attempt ended, when the scheduler requeued it itself
    suspect_nodes: list[str] | None = None  # asked by diagnose (the input's `suspect_rule`); None: not asked


class RecordAdviceResult(Model):
    """Whether the worker that recorded the advice acts on it (`act` mode) or only observes."""

    act: bool


class RunRecord(Model):
    """Everything a TrainingRun has learned; carried across continue-as-new."""

    state: RunState = RunState.PENDING
    paused: bool = False
    attempts: list[Attempt] = Field(default_factory=list)
    symptoms: list[Symptom] = Field(default_factory=list)
    diagnoses: list[Diagnosis] = Field(default_factory=list)
    advice: list[Advice] = Field(default_factory=list)
    actions: list[Action] = Field(default_factory=list)
    milestones: list[Milestone] = Field(default_factory=list)
    excluded_nodes: list[str] = Field(default_factory=list)  # what recovery excluded, oldest first
    # The job's own exclusions when the run began (`#SBATCH --exclude`): every restart keeps
    # them, since setting ExcNodeList or `--exclude` would otherwise replace them.
    own_excluded_nodes: list[str] = Field(default_factory=list)
    restarts_done: int = 0  # restarts that count against max_restarts (not time limits or preemption)
    spent: dict[str, int] = Field(default_factory=dict)  # restarts per budget key
    continued: int = 0

    # What changes, one method a kind of change: entries are found by what names them (an
    # attempt's index, an advice's generation), never by their place in a list. Pure: times
    # come from the caller (workflow.now() in the workflow).

    def attempt(self, index: int) -> Attempt:
        return next(a for a in self.attempts if a.index == index)

    def revise_attempt(self, index: int, **learned: Any) -> None:
        """Record what was learned about attempt `index` (its steps, where its output starts)."""
        _revise(self.attempts, lambda a: a.index == index, learned)

    def refresh_attempt(self, fresh: Attempt) -> None:
        """Replace attempt `fresh.index` with a newer view of it."""
        for i, known in enumerate(self.attempts):
            if known.index == fresh.index:
                self.attempts[i] = fresh

    @property
    def last_symptom(self) -> Symptom:
        return self.symptoms[-1]

    def revise_last_symptom(self, **learned: Any) -> None:
        """Add to the symptom being recovered from (more evidence, a better failure time)."""
        self.symptoms[-1] = self.symptoms[-1].model_copy(update=learned)

    def add_milestone(self, name: MilestoneName, at: datetime, attempt_index: int | None, detail: str = "") -> None:
        self.milestones.append(Milestone(name=name, at=at, attempt_index=attempt_index, detail=detail))

    def move_milestone(self, name: MilestoneName, attempt_index: int, at: datetime) -> None:
        """A better time for attempt `attempt_index`'s milestone `name` (the scheduler's own record)."""
        _revise(self.milestones, lambda m: m.name == name and m.attempt_index == attempt_index, {"at": at})

    def mark_acted(self, generation: int) -> None:
        """The scheduler commands of advice `generation` went through."""
        _revise(self.advice, lambda a: a.generation == generation, {"acted": True})

    def resolve_advice(self, generation: int, status: AdviceStatus, reason: str, at: datetime) -> None:
        """Advice `generation` converged or was abandoned, for `reason`."""
        resolved = {"status": status, "status_reason": reason, "resolved_at": at}
        _revise(self.advice, lambda a: a.generation == generation, resolved)

    def add_action(self, action: Action) -> bool:
        """Record a scheduler command; True when it is the first for its advice."""
        first = not any(a.advice_generation == action.advice_generation for a in self.actions)
        self.actions.append(action)
        return first

    def count_restart(self, budget_key: str) -> None:
        """A restart was carried out: it spends its category's budget and, unless the scheduler
        ended the attempt (a time limit or preemption resumes for free), one of max_restarts."""
        self.spent[budget_key] = self.spent.get(budget_key, 0) + 1
        if budget_key != "scheduler":
            self.restarts_done += 1


def _revise(items: list[_M], match: Callable[[_M], bool], changes: dict[str, Any]) -> None:
    """Replace each item `match` finds with a copy carrying `changes`."""
    for i, item in enumerate(items):
        if match(item):
            items[i] = item.model_copy(update=changes)


class RunInput(Model):
    spec: RunSpec
    record: RunRecord | None = None


class CancelRequest(Model):
    """Signal `cancel`: stop recovering; with `kill_job`, cancel the job too."""

    kill_job: bool = False


class AdoptJobsInput(Model):
    """One round of the `adopt_opted_in_jobs` activity: start runs on `task_queue` for opted-in
    jobs (`interval_seconds` between rounds says how old an ended job may be and still count)."""

    task_queue: str
    interval_seconds: float = 30.0


class AdoptJobsResult(Model):
    """What one adoption round saw, started and refused (with why)."""

    seen: int = 0
    started: list[str] = Field(default_factory=list)
    refused: list[str] = Field(default_factory=list)


class DiscoveryInput(Model):
    """The SlurmDiscovery workflow's input: how often to look for opted-in jobs."""

    interval_seconds: float = Field(default=30.0, gt=0)
    task_queue: str
    rounds_before_continue: int = Field(default=500, ge=1)


class NotifyInput(Model):
    """What a notification carries: which run, and the advice it is about."""

    run_id: str
    run_name: str
    advice: Advice
    webhook: str | None = None
    command: list[str] | None = None
