"""The docs are true: every `recovery ...` command line they show parses (as far as argparse
takes it, `--help` included), policy files named in a tour exist there and load, and every
relative link resolves inside the repository (to a heading, where it names one)."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from recovery.client.submit_argv import command_line
from recovery.worker.cli import build_parser
from recovery.workflows.policy_files import load_policy

REPO = Path(__file__).resolve().parents[2]
DOCS = sorted([REPO / "README.md", *(REPO / "docs").rglob("*.md")])
SHELL = {"sh", "bash", "shell", "console"}
FENCE = re.compile(r"^\s*(```+|~~~+)\s*(\S*)")
PUNCTUATION = set("();<>|&")  # shlex's punctuation_chars: pipes, lists, redirections, <( )
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)


@dataclass(frozen=True)
class Block:
    doc: Path
    line: int  # of the opening fence
    language: str
    lines: tuple[str, ...]


@dataclass(frozen=True)
class Command:
    doc: Path
    line: int
    argv: tuple[str, ...]  # after `recovery`
    cwd: Path | None  # where an earlier `cd` in the block went, if it did

    def __str__(self) -> str:
        return f"{self.doc.relative_to(REPO)}:{self.line}: recovery {shlex.join(self.argv)}"


def blocks(doc: Path) -> list[Block]:
    found: list[Block] = []
    opened: tuple[int, str] | None = None
    body: list[str] = []
    for number, text in enumerate(doc.read_text(encoding="utf-8").splitlines(), start=1):
        fence = FENCE.match(text)
        if fence and opened is None:
            opened, body = (number, fence.group(2).lower()), []
        elif fence and not fence.group(2):
            found.append(Block(doc, opened[0], opened[1], tuple(body)) if opened else Block(doc, 0, "", ()))
            opened = None
        elif opened is not None:
            body.append(text)
    return found


def segments(line: str) -> list[list[str]]:
    """The simple commands of one shell line: split at pipes, lists, redirections and process
    substitutions (`source <(recovery completion bash)`), comments dropped."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    parts: list[list[str]] = [[]]
    for token in lexer:
        if set(token) <= PUNCTUATION:
            parts.append([])
        else:
            parts[-1].append(token)
    return [p for p in parts if p]


def logical_lines(block: Block) -> list[tuple[int, str]]:
    """Lines with `\\` continuations joined and a `$ ` prompt removed."""
    joined: list[tuple[int, str]] = []
    pending = ""
    for offset, text in enumerate(block.lines, start=1):
        text = text.removeprefix("$ ") if not pending else text
        if text.rstrip().endswith("\\"):
            pending += text.rstrip()[:-1] + " "
            continue
        joined.append((block.line + offset, pending + text))
        pending = ""
    return joined


SUBCOMMANDS = frozenset(next(a for a in build_parser()._actions if a.dest == "command").choices or ())


def commands(block: Block) -> list[Command]:
    """`recovery` commands in a shell block; in a block without a language, the lines that start
    with `recovery SUBCOMMAND` (other blocks are output, diagrams or tables)."""
    found: list[Command] = []
    cwd: Path | None = None
    for number, line in logical_lines(block):
        if block.language not in SHELL:
            words = line.split()
            if block.language or len(words) < 2 or words[0] != "recovery" or words[1] not in SUBCOMMANDS:
                continue
        try:
            parts = segments(line)
        except ValueError:  # not shell (output with an odd quote): not a command line
            continue
        for words in parts:
            while words and ASSIGNMENT.match(words[0]):
                words = words[1:]
            if words[:1] == ["cd"] and len(words) == 2 and not words[1].startswith(("$", "~", "/")):
                cwd = (cwd or REPO) / words[1]
            elif words[:1] == ["recovery"]:
                found.append(Command(block.doc, number, tuple(words[1:]), cwd))
    return found


ALL_COMMANDS = [c for doc in DOCS for b in blocks(doc) for c in commands(b)]


def test_the_docs_show_commands() -> None:
    """The extraction itself works: the README's tour alone has a dozen."""
    shown = {c.argv[0] for c in ALL_COMMANDS if c.argv}
    assert {"dev-server", "cluster", "worker", "submit", "list", "status", "diagnose"} <= shown


@pytest.mark.parametrize("command", ALL_COMMANDS, ids=str)
def test_every_command_line_parses(command: Command) -> None:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            command_line(build_parser(), list(command.argv))  # as `recovery` reads it (sbatch's options too)
        except SystemExit as exited:  # --help exits 0; a bad line exits 2 with its reason
            assert exited.code == 0, f"{command}\n{err.getvalue()}"


TOUR_POLICIES = [
    (c, c.argv[i + 1])
    for c in ALL_COMMANDS
    if c.cwd is not None
    for i, word in enumerate(c.argv[:-1])
    if word == "--policy" and c.argv[i + 1].endswith((".yaml", ".yml"))
]


@pytest.mark.parametrize(("command", "policy"), TOUR_POLICIES, ids=lambda v: str(v))
def test_a_policy_file_in_a_tour_is_there_and_loads(command: Command, policy: str) -> None:
    assert command.cwd is not None
    path = command.cwd / policy
    assert path.is_file(), f"{command}: {path.relative_to(REPO)} does not exist"
    load_policy(str(path))


def prose(doc: Path) -> Iterator[tuple[int, str]]:
    """The lines outside fenced blocks, numbered (a `# comment` in a block is no heading)."""
    in_fence = False
    for number, text in enumerate(doc.read_text(encoding="utf-8").splitlines(), start=1):
        if FENCE.match(text):
            in_fence = not in_fence
        elif not in_fence:
            yield number, text


def links(doc: Path) -> list[tuple[int, str]]:
    """Relative link targets outside code (fenced blocks and inline code are not links)."""
    return [
        (number, m.group(1))
        for number, text in prose(doc)
        for m in LINK.finditer(re.sub(r"`[^`]*`", "", text))
        if not SCHEME.match(m.group(1))
    ]


def anchors(doc: Path) -> set[str]:
    """GitHub's heading ids: lower case, punctuation dropped, spaces as hyphens."""
    ids: set[str] = set()
    for _, text in prose(doc):
        if heading := re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", text):
            # `_` inside a word (restart_via) is no emphasis: GitHub keeps it in the id.
            title = re.sub(r"[`*]|(?<!\w)_+|_+(?!\w)|\[([^\]]*)\]\([^)]*\)", r"\1", heading.group(1)).lower()
            ids.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return ids


ALL_LINKS = [(doc, number, target) for doc in DOCS for number, target in links(doc)]


def test_the_docs_have_links() -> None:
    assert len(ALL_LINKS) > 20


@pytest.mark.parametrize(
    ("doc", "number", "target"), ALL_LINKS, ids=[f"{d.relative_to(REPO)}:{n}" for d, n, _ in ALL_LINKS]
)
def test_every_relative_link_resolves_inside_the_repository(doc: Path, number: int, target: str) -> None:
    where = f"{doc.relative_to(REPO)}:{number}: {target}"
    path, _, anchor = target.partition("#")
    resolved = (doc.parent / path).resolve() if path else doc
    assert resolved.is_relative_to(REPO), f"{where} leaves the repository"
    assert resolved.exists(), f"{where} does not exist"
    if anchor and resolved.suffix == ".md":
        assert anchor in anchors(resolved), f"{where}: no such heading in {resolved.relative_to(REPO)}"


def named_docs(doc: Path) -> list[tuple[int, str]]:
    """Markdown files a doc names in inline code (`interfaces.md`), outside fenced blocks."""
    return [(number, name) for number, text in prose(doc) for name in re.findall(r"`([\w./-]+\.md)`", text)]


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: str(d.relative_to(REPO)))
def test_every_doc_named_in_the_docs_is_in_the_repository(doc: Path) -> None:
    """A name in code is not a link, but a reader looks for it all the same: beside the doc,
    from the repository's root, or in docs/."""
    missing = [
        f"{doc.relative_to(REPO)}:{number}: {name}"
        for number, name in named_docs(doc)
        if not any((base / name).is_file() for base in (doc.parent, REPO, REPO / "docs"))
    ]
    assert not missing
