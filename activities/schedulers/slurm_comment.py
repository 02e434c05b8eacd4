"""The job comment that marks a Slurm job as `recovery`'s, and says how.

Format, always starting with the word `recovery` so that every marked job is opted in:

    recovery                                  opted in, default policy
    recovery:policy=NAME                      opted in, policy NAME
    recovery:token=TOKEN                      submitted by recovery for a run (find(token) finds it)
    recovery:policy=NAME,token=TOKEN          both

Items are `key=value`, separated by commas. `token` is always the last item and takes the rest
of the comment verbatim (a token may hold `:` and `,`). Unknown keys are kept and ignored, so
later versions can add items. A comment that does not start with `recovery` followed by the end
or `:` (e.g. `recovery-test`) is not an opt-in.

The workflow's tokens have the form `recovery:RUN_ID:ATTEMPT`, so a job submitted by a run reads
`recovery:token=recovery:RUN_ID:0`; `run_id` gives RUN_ID back, which lets discovery tell a job
that already belongs to a run from one a user opted in with plain sbatch.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from recovery.activities.schedulers.sbatch_script import option

PREFIX = "recovery"


@dataclass(frozen=True)
class RecoveryComment:
    opted_in: bool
    policy: str | None = None
    token: str | None = None
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def pipeline(self) -> str | None:
        """The pipeline that queued this job held for one of its stages (`pipeline=ID`): the
        pipeline releases it, and its stage's run adopts it then."""
        return self.extra.get("pipeline") or None

    @property
    def run_id(self) -> str | None:
        """The run a workflow-submitted job belongs to (from a `recovery:RUN:N` token)."""
        if not self.token:
            return None
        parts = self.token.split(":")
        if len(parts) >= 3 and parts[0] == PREFIX and parts[-1].isdigit():
            return ":".join(parts[1:-1]) or None
        return None


def parse_comment(comment: str) -> RecoveryComment:
    text = comment.strip()
    if text != PREFIX and not text.startswith(PREFIX + ":"):
        return RecoveryComment(opted_in=False)
    items: dict[str, str] = {}
    rest = text[len(PREFIX) + 1 :]
    while rest:
        if rest.startswith("token="):
            items["token"] = rest[len("token=") :]
            break
        item, _, rest = rest.partition(",")
        key, _, value = item.partition("=")
        if key.strip():
            items[key.strip()] = value.strip()
    policy = items.pop("policy", None) or None
    token = items.pop("token", None) or None
    return RecoveryComment(opted_in=True, policy=policy, token=token, extra=items)


def format_comment(token: str, policy: str | None = None, extra: dict[str, str] | None = None) -> str:
    items = [f"policy={policy}"] if policy else []
    items += [f"{k}={v}" for k, v in (extra or {}).items() if k not in ("policy", "token")]
    items.append(f"token={token}")
    return f"{PREFIX}:{','.join(items)}"


def script_comment(script: str) -> str | None:
    """The `#SBATCH --comment=...` a batch script carries, if any, as sbatch reads it."""
    return option(script, "--comment")


def submission_comment(script: str, token: str, labels: dict[str, str] | None = None) -> str:
    """The comment a run's job is submitted with: the token, plus the policy (and any other
    items) of a `#SBATCH --comment=recovery:...` the script itself carries, which the command
    line's `--comment` would otherwise silently replace, and `labels` (a pipeline's stage says
    which pipeline holds it and after which stages)."""
    own = parse_comment(script_comment(script) or "")
    return format_comment(token, own.policy, {**own.extra, **{k: _item(v) for k, v in (labels or {}).items()}})


def _item(value: str) -> str:
    """A value that stays one item: commas separate items, so lists are written with `+`."""
    return value.replace(",", "+")
