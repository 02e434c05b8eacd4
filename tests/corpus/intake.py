"""Adds collected excerpts to the corpus, each into the part its project belongs to.

    python -m tests.corpus.intake FOLDER...

Each FOLDER holds `*.log` excerpts and a `labels.yaml` whose entries name them (`file`), with
the keys of README.md's entries. An excerpt whose source thread is already in the corpus is
skipped. Files move to `<part>/<project>/`, labels are appended to `<part>/labels.yaml`.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import yaml

from tests.corpus.scoring import CORPUS, PARTS, _excerpt, part_of


def project_folder(project: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", project.strip().lower()).strip("-")


def intake(folder: Path) -> tuple[int, int]:
    entries = yaml.safe_load((folder / "labels.yaml").read_text(encoding="utf-8")) or []
    labels = {part: _read(part) for part in PARTS}
    sources = {e["source"] for part in PARTS for e in labels[part]}
    added = skipped = 0
    for entry in entries:
        src = folder / entry["file"]
        if entry["source"] in sources or not src.is_file():
            skipped += 1
            continue
        part = part_of(entry["project"])
        name = f"{project_folder(entry['project'])}/{Path(entry['file']).name}"
        dest = CORPUS / part / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
        labelled = {**entry, "file": name}
        _excerpt(part, labelled)  # the labels' own rules, before it is kept
        labels[part].append(labelled)
        sources.add(entry["source"])
        added += 1
    for part in PARTS:
        _write(part, labels[part])
    return added, skipped


def _read(part: str) -> list[dict[str, object]]:
    path = CORPUS / part / "labels.yaml"
    return list(yaml.safe_load(path.read_text(encoding="utf-8")) or []) if path.exists() else []


def _write(part: str, entries: list[dict[str, object]]) -> None:
    path = CORPUS / part / "labels.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    entries = sorted(entries, key=lambda e: str(e["file"]))
    text = yaml.safe_dump(entries, sort_keys=False, allow_unicode=True, width=100)
    path.write_text(f"# Labels of the {part} part; rules in ../README.md.\n{text}", encoding="utf-8")


def main(argv: list[str]) -> int:
    for folder in argv:
        added, skipped = intake(Path(folder))
        print(f"{folder}: {added} added, {skipped} skipped (a thread already in the corpus, or no file)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
