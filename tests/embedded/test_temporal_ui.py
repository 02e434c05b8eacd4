"""What an operator sees of a run from Temporal itself, with no `recovery` in between: the plain
`temporal` CLI and the Temporal UI (in Debian's headless Chromium, driven by Playwright), on
the real dev server of the embedded default, for a run that failed once and recovered."""

from __future__ import annotations

import base64
import json
import re
import struct
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

try:  # only the UI test needs it: without it that test skips, or fails in CI (need)
    from playwright.async_api import Page, async_playwright, expect

    HAVE_PLAYWRIGHT = True
except ImportError:
    HAVE_PLAYWRIGHT = False

from recovery.activities.schedulers.local import launcher as local_cluster
from recovery.worker.devserver import temporal_binary
from tests.conftest import need
from tests.embedded.conftest import Embedded, wait_for

# The run's story, in the order its activities ran: one failure, recovered on other nodes.
STORY = [
    "submit_attempt",
    "watch_attempt",
    "diagnose",
    "record_advice",
    "requeue_hold",
    "set_excluded_nodes",
    # Started in one workflow task since "fewer-round-trips": the verification waits for the
    # job the release lets run.
    "verify_successor",
    "release",
    "watch_attempt",
]
# Steps that run inside a workflow task (local activities), which history and UI show as markers:
# diagnose since "diagnose-in-task".
LOCAL_STEPS = {"diagnose"}


@pytest.fixture(scope="module")
def running_worker(embedded: Embedded) -> Iterator[None]:
    embedded.start_worker()
    try:
        yield
    finally:
        embedded.stop_workers()


@pytest.fixture(scope="module")
def recovered(embedded: Embedded, running_worker: None) -> str:
    """The id of a run whose first attempt crashed on node2 and whose second completed."""
    script = embedded.job_script("ui-story", fault_node="node2")
    done = embedded.recovery("submit", "--json", "--run", "ui story", str(script), cwd=script.parent)
    assert done.returncode == 0, done.stderr
    run_id = str(json.loads(done.stdout)["run"])
    assert wait_for(lambda: status(embedded, run_id)["run"]["state"] == "completed", timeout=90, interval=0.5)
    return run_id


def status(embedded: Embedded, run_id: str) -> dict[str, Any]:
    done = embedded.recovery("status", run_id, "--json")
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def temporal(embedded: Embedded, *args: str) -> Any:
    """The plain `temporal` CLI against the embedded server, its JSON output parsed."""
    argv = [
        temporal_binary(), *args,
        "--address", embedded.server.address, "--namespace", namespace(embedded), "--output", "json",
    ]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, (argv, done.stderr)
    text = done.stdout.strip()
    try:
        return json.loads(text) if text else None
    except json.JSONDecodeError:  # some commands print one JSON object per line
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def namespace(embedded: Embedded) -> str:
    return embedded.env.get("RECOVERY_NAMESPACE", "default")


def decoded(payload: dict[str, Any]) -> Any:
    """A payload as the CLI prints it (base64 data of JSON) back to its value."""
    return json.loads(base64.b64decode(payload["data"]))


def listed(embedded: Embedded, query: str) -> list[str]:
    """Workflow ids that `temporal workflow list --query` finds."""
    found = temporal(embedded, "workflow", "list", "--query", query) or []
    return [row["execution"]["workflowId"] for row in found]


# --- the plain temporal CLI ----------------------------------------------------------------


def test_describe_shows_memo_summary_and_search_attributes(embedded: Embedded, recovered: str) -> None:
    described = temporal(embedded, "workflow", "describe", "--workflow-id", recovered)
    info = described["workflowExecutionInfo"]
    memo = info["memo"]["fields"]
    assert memo["name"] == "ui story" and memo["policy"] == "default"
    assert memo["script"].endswith("/job.sbatch") and memo["owner"]
    metadata = described["executionConfig"]["userMetadata"]
    assert metadata["summary"] == f"ui story: {memo['script']} by {memo['owner']}, policy default"
    for line in ("name: ui story", f"script: {memo['script']}", f"owner: {memo['owner']}", "policy: default"):
        assert line in metadata["details"].splitlines()
    attrs = {name: decoded(value) for name, value in info["searchAttributes"]["indexedFields"].items()}
    assert attrs["RecoveryState"] == "completed"
    assert attrs["RecoveryAttempts"] == 2
    assert attrs["RecoveryLastSymptom"] == "crash"
    assert attrs["RecoveryScheduler"] == "local"
    assert "node2" in attrs["RecoveryExcludedNodes"]
    assert len(attrs["RecoveryJobIds"]) == 1


def test_recovered_run_is_found_by_its_search_attributes(embedded: Embedded, recovered: str) -> None:
    assert recovered in listed(embedded, 'RecoveryState="completed"')
    assert recovered in listed(embedded, 'RecoveryLastSymptom="crash" AND RecoveryExcludedNodes="node2"')
    assert recovered in listed(embedded, 'RecoveryAttempts >= 2 AND RecoveryScheduler="local"')
    assert recovered not in listed(embedded, 'RecoveryState="recovering" OR RecoveryState="running"')


def test_history_tells_the_story_with_the_advice_as_input(embedded: Embedded, recovered: str) -> None:
    events = temporal(embedded, "workflow", "show", "--workflow-id", recovered)["events"]
    scheduled = [
        e["activityTaskScheduledEventAttributes"] for e in events if "activityTaskScheduledEventAttributes" in e
    ]
    names = [step for e in events if (step := activity_step(e)) is not None]
    assert in_order(STORY, names), " ".join(names)
    (advice_input,) = [
        decoded(s["input"]["payloads"][0]) for s in scheduled if s["activityType"]["name"] == "record_advice"
    ]
    advice = advice_input["advice"]
    assert advice["operation"] == "restart" and "node2" in advice["excluded_nodes"]
    assert "restart 1 of 5" in advice["explanation"]


def activity_step(event: dict[str, Any]) -> str | None:
    """The activity an event of the CLI's history starts: scheduled, or a local one's marker."""
    if "activityTaskScheduledEventAttributes" in event:
        return str(event["activityTaskScheduledEventAttributes"]["activityType"]["name"])
    marker = event.get("markerRecordedEventAttributes")
    if marker is None or marker["markerName"] != "core_local_activity":
        return None
    return str(decoded(marker["details"]["data"]["payloads"][0])["activity_type"])


def in_order(story: list[str], names: list[str]) -> bool:
    """Whether `story` occurs in `names` in order (other activities may come between)."""
    remaining = iter(names)
    return all(step in remaining for step in story)


def test_plain_cli_signals_pause_resume_and_cancel(embedded: Embedded, running_worker: None) -> None:
    script = embedded.job_script("signals", steps=3000)  # runs for minutes unless cancelled
    done = embedded.recovery("submit", "--json", str(script), cwd=script.parent)
    assert done.returncode == 0, done.stderr
    run_id, job_id = json.loads(done.stdout)["run"], json.loads(done.stdout)["job_id"]
    try:
        pause_resume_cancel(embedded, run_id, job_id)
    finally:  # a failed check must not leave the job holding nodes for later tests
        embedded.recovery("cancel", run_id, "--kill-job")


def pause_resume_cancel(embedded: Embedded, run_id: str, job_id: str) -> None:
    assert wait_for(lambda: status(embedded, run_id)["run"]["state"] == "running", timeout=30)
    temporal(embedded, "workflow", "signal", "--workflow-id", run_id, "--name", "pause")
    assert wait_for(lambda: status(embedded, run_id)["run"]["paused"], timeout=30)
    assert status(embedded, run_id)["run"]["state"] == "paused"
    assert wait_for(lambda: run_id in listed(embedded, f'WorkflowId="{run_id}" AND RecoveryState="paused"'))

    temporal(embedded, "workflow", "signal", "--workflow-id", run_id, "--name", "resume")
    assert wait_for(lambda: not status(embedded, run_id)["run"]["paused"], timeout=30)
    assert status(embedded, run_id)["run"]["state"] == "running"

    kill = ["--input", json.dumps({"kill_job": True})]
    temporal(embedded, "workflow", "signal", "--workflow-id", run_id, "--name", "cancel", *kill)
    assert wait_for(lambda: status(embedded, run_id)["run"]["state"] == "cancelled", timeout=30)
    assert wait_for(lambda: job_state(job_id) == "CANCELLED", timeout=30)
    assert wait_for(lambda: run_id in listed(embedded, f'WorkflowId="{run_id}" AND RecoveryState="cancelled"'))


def job_state(job_id: str) -> str | None:
    jobs = {job.job_id: job for job in local_cluster.status().jobs}
    return jobs[job_id].state.value if job_id in jobs else None


# --- the Temporal UI in headless Chromium -----------------------------------------------------

CHROMIUM = Path("/usr/bin/chromium")
# No sandbox as root; nothing that reaches for the internet (there is none here, and in CI
# Chromium would wait on it); no GPU.
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
]  # fmt: skip
SHOWN = 30_000  # ms for the UI to render what its API calls return


@pytest.fixture
async def page(tmp_path: Path) -> AsyncIterator[Page]:
    """A page of Debian's Chromium with a fresh profile (Playwright's own browsers are never used)."""
    need(HAVE_PLAYWRIGHT, "the playwright package (pip install -e '.[dev]')")
    need(CHROMIUM.is_file(), f"Debian's chromium ({CHROMIUM}; `make test-deps` installs it)")
    async with async_playwright() as playwright:
        context = await playwright.chromium.launch_persistent_context(
            str(tmp_path / "profile"),
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1600, "height": 1200},
        )
        try:
            yield context.pages[0] if context.pages else await context.new_page()
        finally:
            await context.close()


async def test_ui_tells_the_story_of_a_recovered_run(
    embedded: Embedded, recovered: str, page: Page, tmp_path: Path
) -> None:
    ui = f"{embedded.server.ui_url}/namespaces/{namespace(embedded)}"
    await page.goto(f"{ui}/workflows/{recovered}")
    await expect(page.get_by_text("COMPLETED").first).to_be_visible(timeout=SHOWN)
    await check_timeline(page)
    check_png(await screenshot(page, tmp_path / "timeline.png"))
    await check_advice_in_history(page)
    check_png(await screenshot(page, tmp_path / "history.png"))
    await check_user_metadata(page)
    check_png(await screenshot(page, tmp_path / "user-metadata.png"))

    completed = 'RecoveryState="completed"'
    await page.goto(f"{ui}/workflows?query={quote(completed)}")
    await expect(page.get_by_text(recovered).first).to_be_visible(timeout=SHOWN)
    assert 'RecoveryState = "completed"' in await page.inner_text("body")
    check_png(await screenshot(page, tmp_path / "list.png"))


async def check_timeline(page: Page) -> None:
    """The workflow page opens on its timeline: one bar per activity, oldest first, labelled
    `Event NAME: STATUS`. It reads as the story, every step completed."""
    bars = page.locator('[aria-label^="Event "]')
    await expect(page.locator('[aria-label="Event verify_successor: Completed"]')).to_be_attached(timeout=SHOWN)
    labels: list[str] = await bars.evaluate_all("bars => bars.map(b => b.getAttribute('aria-label'))")
    # Besides the activities: the watch's safety timer ("Event 1 (1h, 12m, 12s): Canceled" when
    # news came first; an hour to 1.5 hours, spread per run) and markers, which the UI shows with
    # no status: workflow.patched's ("Event core_patch: Unspecified") and a local activity's
    # result ("Event diagnose: Unspecified"), a step of the story.
    local = [f"Event {name}: Unspecified" for name in LOCAL_STEPS]
    others = [label for label in labels if re.fullmatch(r"Event (\d+ \([\w, ]+\): \w+|\w+: Unspecified)", label)]
    steps = [re.fullmatch(r"Event (\w+): (\w+)", label) for label in labels if label in local or label not in others]
    assert all(step is not None and (step.group(2) == "Completed" or step.group(1) in LOCAL_STEPS) for step in steps), (
        " | ".join(labels)
    )
    assert in_order(STORY, [step.group(1) for step in steps if step is not None]), labels


async def check_advice_in_history(page: Page) -> None:
    """In the event history, opening record_advice's scheduled event shows the advice itself."""
    await page.get_by_test_id("history-tab").click()
    history = page.locator("table")
    await expect(history.get_by_text("record_advice").first).to_be_visible(timeout=SHOWN)
    await history.locator("tr", has_text="record_advice").first.click()
    for text in ('"operation": "restart"', '"node2"', "retryable_failure"):
        await expect(history.get_by_text(text).first).to_be_visible(timeout=SHOWN)


async def check_user_metadata(page: Page) -> None:
    """Summary and details, rendered as markdown, each in its own sandboxed frame."""
    await page.get_by_text("User Metadata").first.click()
    summary, details = (page.frame_locator("iframe").nth(i).locator("body") for i in (0, 1))
    await expect(summary).to_contain_text("ui story: ", timeout=SHOWN)
    assert "policy default" in await summary.inner_text()
    await expect(details).to_contain_text("name: ui story", timeout=SHOWN)
    for line in ("script: ", "owner: ", "policy: default"):
        assert line in await details.inner_text()


async def screenshot(page: Page, path: Path) -> Path:
    await page.screenshot(path=str(path), full_page=True)
    return path


def check_png(path: Path) -> None:
    """A real picture: the PNG signature, a sensible size in its header, and enough bytes."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    width, height = struct.unpack(">II", data[16:24])
    assert width >= 800 and height >= 600, (width, height)
    assert len(data) > 20_000, len(data)  # a blank page compresses to a few kB
