"""`recovery submit [OPTIONS] JOB.sbatch [ARGS]`: recovery's options and sbatch's own, mixed
before the script as a Slurm user types them (`recovery submit -p gpu -t 2:00:00 --policy p.yaml
job.sbatch --lr 3e-4`), told apart here before argparse reads recovery's.

The rule (docs/running-jobs.md, "sbatch's own options"):
- recovery's own options are read by recovery, written exactly (`--policy`, `--nodes`, ...);
- everything else before the script must be an sbatch option, read as sbatch reads it
  (`recovery.activities.schedulers.sbatch_options`), and is passed on to sbatch as typed, before
  the options recovery itself gives sbatch;
- where sbatch and recovery both have a word for one thing, it is recovery's: `-N/--nodes` is
  `--nodes` (the run needs the count to judge which nodes are usable) and `-J/--job-name` is
  `--run`; saying it both ways is refused;
- options recovery must set itself, or that would make the job something a run cannot follow,
  are refused, each with its reason (`REFUSED`);
- the local scheduler refuses the options it cannot honour (all but `--exclude`).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from recovery.activities.schedulers.local.adapter import HONOURED_SBATCH_OPTIONS
from recovery.activities.schedulers.sbatch_options import (
    SBATCH_OPTIONS,
    SbatchOption,
    SbatchOptionError,
    read_long,
    read_short,
    typed,
)
from recovery.client.submit import SubmitError

# sbatch's spelling of recovery's own options.
SAME_AS = {"nodes": "--nodes", "job-name": "--run"}

REFUSED = {
    "parsable": "recovery reads the job id sbatch prints",
    "comment": "recovery keeps the run's token in the job's comment",
    "open-mode": "recovery appends the output across restarts (--open-mode=append)",
    "requeue": "recovery requeues the job itself (--requeue)",
    "no-requeue": "recovery restarts a run by requeueing its job",
    "export": "recovery passes the environment you submit from (--export=ALL); set variables there",
    "chdir": "the job runs in the directory you submit from (--chdir); cd there first",
    "array": "a run is one job; submit one run per task",
    "wrap": "a run needs a batch script",
    "hold": "recovery holds and releases the job itself when it restarts it",
    "wait": "submit returns once the run is started; follow it with `recovery status`",
    "test-only": "it submits no job",
    "clusters": "a worker follows jobs on its own cluster only",
    "cluster": "a worker follows jobs on its own cluster only",
    "help": "see `sbatch --help`",
    "usage": "see `sbatch --usage`",
    "version": "see `sbatch --version`",
}


@dataclass
class SubmitWords:
    own: list[str] = field(default_factory=list)  # recovery's options, for argparse
    sbatch: list[SbatchOption] = field(default_factory=list)
    script_and_args: list[str] = field(default_factory=list)


def own_options(parser: argparse.ArgumentParser) -> dict[str, bool]:
    """Each option string of the parser, and whether it takes a value."""
    return {flag: action.nargs != 0 for action in parser._actions for flag in action.option_strings}


def split(words: list[str], own: dict[str, bool]) -> SubmitWords:
    """Recovery's options, sbatch's, and the script with its arguments (everything from the first
    word that is no option, or after `--`)."""
    out = SubmitWords()
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--":
            out.script_and_args = words[i + 1 :]
            break
        if not word.startswith("-") or word == "-":
            out.script_and_args = words[i:]
            break
        flag = word.partition("=")[0]
        if flag in own:
            takes = own[flag] and "=" not in word
            out.own += words[i : i + 2] if takes else [word]
            i += 2 if takes else 1
            continue
        try:
            if word.startswith("--"):
                option, i = read_long(words, i)
                found = [option]
            else:
                found, i = read_short(words, i)
        except SbatchOptionError as e:
            raise SubmitError(f"{e}; recovery's own options are in `recovery submit --help`") from None
        for option in found:
            _take(option, out)
    for name, mine in SAME_AS.items():
        if sum(w == mine or w.startswith(f"{mine}=") for w in out.own) > 1:
            short = SBATCH_OPTIONS[name][1]
            raise SubmitError(f"{mine} given twice: sbatch's -{short}/--{name} is recovery's {mine}; give it once")
    return out


def _take(option: SbatchOption, out: SubmitWords) -> None:
    if option.name in REFUSED:
        raise SubmitError(f"sbatch's --{option.name} cannot be given to a run: {REFUSED[option.name]}")
    mine = SAME_AS.get(option.name)
    if mine is None:
        out.sbatch.append(option)
        return
    if option.name == "nodes" and not (option.value or "").isdigit():
        raise SubmitError(
            f"{' '.join(option.words)}: a run needs a node count; write a range in the script's #SBATCH --nodes"
        )
    out.own += [mine, option.value or ""]


def refuse_on_local(options: list[SbatchOption]) -> None:
    """The local scheduler has no partitions, time limits, accounts or GPUs to ask for: rather
    than run a job without what it asked for, submit refuses, naming what it cannot honour."""
    unhonoured = [option for option in options if option.name not in HONOURED_SBATCH_OPTIONS]
    if unhonoured:
        named = ", ".join(" ".join(option.words) for option in unhonoured)
        raise SubmitError(
            f"the local scheduler cannot honour sbatch's {named} (it honours only "
            f"{', '.join('--' + n for n in HONOURED_SBATCH_OPTIONS)}); submit with --scheduler slurm, or leave them out"
        )


def command_line(parser: argparse.ArgumentParser, argv: list[str]) -> tuple[argparse.Namespace, list[SbatchOption]]:
    """Parse the `recovery` command line; for `submit`, sbatch's options apart, as in the rule above."""
    sub = _subcommands(parser)
    at = _command_at(argv, own_options(parser))
    if sub is None or at is None or argv[at] != "submit":
        return parser.parse_args(argv), []
    words = split(argv[at + 1 :], own_options(sub.choices["submit"]))
    script_and_args = words.script_and_args
    # `--` keeps a script named like an option, and the script's own options, away from argparse.
    tail = ["--", *script_and_args] if script_and_args else []
    return parser.parse_args([*argv[: at + 1], *words.own, *tail]), words.sbatch


def _subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction[argparse.ArgumentParser] | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    return None


def _command_at(argv: list[str], top: dict[str, bool]) -> int | None:
    i = 0
    while i < len(argv):
        word = argv[i]
        if not word.startswith("-"):
            return i
        i += 2 if top.get(word) and "=" not in word else 1
    return None


__all__ = ["REFUSED", "SAME_AS", "SubmitWords", "command_line", "refuse_on_local", "split", "typed"]
