"""sbatch's own options, as sbatch reads them: the table of the options sbatch knows and whether
each takes a value, and a reader with getopt_long's rules, for the options a user writes before
the script of `recovery submit` (docs/running-jobs.md, "sbatch's own options").

The table is Slurm 25.11.7's: `common_options` in src/common/slurm_opt.c, the entries with a
name and a `set_func` or `set_func_sbatch` (the ones `slurm_option_table_create` gives sbatch).
sbatch's option string starts with `+`, so options end at the first word that is not one (the
script) or at `--`; a long option may be abbreviated to any unique prefix, and takes its value as
`--opt=V` or `--opt V` (an optional value only as `--opt=V`); short ones cluster (`-Hv`) and
take a value attached or as the next word (`-pgpu`, `-p gpu`). Site plugins (SPANK) may add
options this table does not know: they are refused, named, rather than guessed at.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Arg(Enum):
    NONE = "none"
    REQUIRED = "required"
    OPTIONAL = "optional"


NONE, REQUIRED, OPTIONAL = Arg.NONE, Arg.REQUIRED, Arg.OPTIONAL

# long name: (whether it takes a value, its short letter)
SBATCH_OPTIONS: dict[str, tuple[Arg, str | None]] = {
    "account": (REQUIRED, "A"),
    "acctg-freq": (REQUIRED, None),
    "array": (REQUIRED, "a"),
    "autocomplete": (REQUIRED, None),
    "batch": (REQUIRED, None),
    "begin": (REQUIRED, "b"),
    "bb": (REQUIRED, None),
    "bbf": (REQUIRED, None),
    "cluster-constraint": (REQUIRED, None),
    "chdir": (REQUIRED, "D"),
    "cluster": (REQUIRED, None),
    "clusters": (REQUIRED, "M"),
    "comment": (REQUIRED, None),
    "consolidate-segments": (NONE, None),
    "container": (REQUIRED, None),
    "container-id": (REQUIRED, None),
    "context": (REQUIRED, None),
    "contiguous": (NONE, None),
    "constraint": (REQUIRED, "C"),
    "core-spec": (REQUIRED, "S"),
    "cores-per-socket": (REQUIRED, None),
    "cpu-freq": (REQUIRED, None),
    "cpus-per-gpu": (REQUIRED, None),
    "cpus-per-task": (REQUIRED, "c"),
    "deadline": (REQUIRED, None),
    "delay-boot": (REQUIRED, None),
    "dependency": (REQUIRED, "d"),
    "distribution": (REQUIRED, "m"),
    "error": (REQUIRED, "e"),
    "exclude": (REQUIRED, "x"),
    "exclusive": (OPTIONAL, None),
    "export": (REQUIRED, None),
    "export-file": (REQUIRED, None),
    "external": (NONE, None),
    "extra": (REQUIRED, None),
    "extra-node-info": (REQUIRED, "B"),
    "get-user-env": (NONE, None),
    "gid": (REQUIRED, None),
    "gpu-bind": (REQUIRED, None),
    "gpu-freq": (REQUIRED, None),
    "gpus": (REQUIRED, "G"),
    "gpus-per-node": (REQUIRED, None),
    "gpus-per-socket": (REQUIRED, None),
    "gpus-per-task": (REQUIRED, None),
    "gres": (REQUIRED, None),
    "gres-flags": (REQUIRED, None),
    "help": (NONE, "h"),
    "hint": (REQUIRED, None),
    "hold": (NONE, "H"),
    "ignore-pbs": (NONE, None),
    "input": (REQUIRED, "i"),
    "job-name": (REQUIRED, "J"),
    "kill-on-invalid-dep": (REQUIRED, None),
    "licenses": (REQUIRED, "L"),
    "mail-type": (REQUIRED, None),
    "mail-user": (REQUIRED, None),
    "mcs-label": (REQUIRED, None),
    "mem": (REQUIRED, None),
    "mem-bind": (REQUIRED, None),
    "mem-per-cpu": (REQUIRED, None),
    "mem-per-gpu": (REQUIRED, None),
    "mincpus": (REQUIRED, None),
    "network": (REQUIRED, None),
    "nice": (OPTIONAL, None),
    "no-kill": (OPTIONAL, "k"),
    "no-requeue": (NONE, None),
    "nodefile": (REQUIRED, "F"),
    "nodelist": (REQUIRED, "w"),
    "nodes": (REQUIRED, "N"),
    "ntasks": (REQUIRED, "n"),
    "ntasks-per-core": (REQUIRED, None),
    "ntasks-per-gpu": (REQUIRED, None),
    "ntasks-per-node": (REQUIRED, None),
    "ntasks-per-socket": (REQUIRED, None),
    "ntasks-per-tres": (REQUIRED, None),
    "oom-kill-step": (OPTIONAL, None),
    "open-mode": (REQUIRED, None),
    "output": (REQUIRED, "o"),
    "overcommit": (NONE, "O"),
    "oversubscribe": (NONE, "s"),
    "parsable": (NONE, None),
    "partition": (REQUIRED, "p"),
    "prefer": (REQUIRED, None),
    "priority": (REQUIRED, None),
    "profile": (REQUIRED, None),
    "propagate": (OPTIONAL, None),
    "qos": (REQUIRED, "q"),
    "quiet": (NONE, "Q"),
    "reboot": (NONE, None),
    "requeue": (OPTIONAL, None),
    "resources": (REQUIRED, None),
    "reservation": (REQUIRED, None),
    "resv-ports": (OPTIONAL, None),
    "segment": (REQUIRED, None),
    "signal": (REQUIRED, None),
    "sockets-per-node": (REQUIRED, None),
    "spread-job": (NONE, None),
    "spread-segments": (NONE, None),
    "stepmgr": (NONE, None),
    "switches": (REQUIRED, None),
    "tasks-per-node": (REQUIRED, None),
    "test-only": (NONE, None),
    "thread-spec": (REQUIRED, None),
    "threads-per-core": (REQUIRED, None),
    "time": (REQUIRED, "t"),
    "time-min": (REQUIRED, None),
    "tmp": (REQUIRED, None),
    "tres-bind": (REQUIRED, None),
    "tres-per-task": (REQUIRED, None),
    "uid": (REQUIRED, None),
    "use-min-nodes": (NONE, None),
    "verbose": (NONE, "v"),
    "version": (NONE, "V"),
    "usage": (NONE, None),
    "wait": (NONE, "W"),
    "wait-all-nodes": (REQUIRED, None),
    "wckey": (REQUIRED, None),
    "wrap": (REQUIRED, None),
}
SHORT = {short: name for name, (_, short) in SBATCH_OPTIONS.items() if short}


class SbatchOptionError(ValueError):
    """Options sbatch would not accept; the message is one line naming the word."""


@dataclass(frozen=True)
class SbatchOption:
    name: str  # the long name, even when written short or abbreviated
    value: str | None
    words: tuple[str, ...]  # as the user typed it: passed on to sbatch unchanged


def long_option(word: str) -> str:
    """The long option `--word` names: itself, or the one option it is a prefix of (getopt_long)."""
    if word in SBATCH_OPTIONS:
        return word
    matches = [name for name in SBATCH_OPTIONS if name.startswith(word)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise SbatchOptionError(f"--{word} is ambiguous for sbatch: --{', --'.join(sorted(matches))}")
    raise SbatchOptionError(f"--{word} is not an sbatch option (sbatch {SLURM_RELEASE})")


SLURM_RELEASE = "25.11"


def read_long(words: list[str], i: int) -> tuple[SbatchOption, int]:
    """The long option at words[i] and the index after it."""
    name, eq, value = words[i][2:].partition("=")
    name = long_option(name)
    arg, _ = SBATCH_OPTIONS[name]
    if eq:
        if arg is NONE:
            raise SbatchOptionError(f"sbatch's --{name} takes no value: {words[i]}")
        return SbatchOption(name, value, (words[i],)), i + 1
    if arg is REQUIRED:
        if i + 1 >= len(words):
            raise SbatchOptionError(f"sbatch's --{name} needs a value")
        return SbatchOption(name, words[i + 1], (words[i], words[i + 1])), i + 2
    return SbatchOption(name, None, (words[i],)), i + 1


def read_short(words: list[str], i: int) -> tuple[list[SbatchOption], int]:
    """The cluster of short options at words[i] (`-Hv`, `-pgpu`, `-p gpu`), the index after it."""
    word, found = words[i], []
    for at, letter in enumerate(word[1:], start=1):
        if letter not in SHORT:
            raise SbatchOptionError(f"-{letter} is not an sbatch option (sbatch {SLURM_RELEASE}): {word}")
        name = SHORT[letter]
        arg, _ = SBATCH_OPTIONS[name]
        rest = word[at + 1 :]
        if arg is NONE:
            found.append(SbatchOption(name, None, (f"-{letter}",)))
            continue
        if rest or arg is OPTIONAL:
            found.append(SbatchOption(name, rest or None, (f"-{letter}{rest}",)))
            return found, i + 1
        if i + 1 >= len(words):
            raise SbatchOptionError(f"sbatch's -{letter} needs a value")
        found.append(SbatchOption(name, words[i + 1], (f"-{letter}", words[i + 1])))
        return found, i + 2
    return found, i + 1


def read_options(words: list[str]) -> list[SbatchOption]:
    """Every word must belong to an option (the caller took the script off)."""
    found: list[SbatchOption] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word.startswith("--") and len(word) > 2:
            option, i = read_long(words, i)
            found.append(option)
        elif word.startswith("-") and len(word) > 1:
            options, i = read_short(words, i)
            found += options
        else:
            raise SbatchOptionError(f"{word!r} is not an sbatch option")
    return found


def typed(options: list[SbatchOption]) -> list[str]:
    return [word for option in options for word in option.words]
