"""Reading a Prometheus text exposition in tests: samples as (name, labels, value)."""

from __future__ import annotations

import re

import httpx

Sample = tuple[str, dict[str, str], float]

SAMPLE = re.compile(r"^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(?P<labels>.*)\})? (?P<value>\S+)$")
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def samples(text: str) -> list[Sample]:
    found = []
    for line in text.splitlines():
        m = SAMPLE.match(line)
        if m and not line.startswith("#"):
            found.append((m["name"], dict(LABEL.findall(m["labels"] or "")), float(m["value"])))
    return found


def value(scraped: list[Sample], name: str, **labels: str) -> float:
    """The sum over the series of `name` whose labels include `labels` (0 if none)."""
    return sum(v for n, ls, v in scraped if n == name and labels.items() <= ls.items())


def scrape(port: int) -> list[Sample]:
    return samples(httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text)
