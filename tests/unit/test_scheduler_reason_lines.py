"""Scheduler notices where the deletion line is followed by the reason: the reason decides
(real notices, from the development part of the corpus, with their sources)."""

from __future__ import annotations

from tests.unit.real_lines import verdict


def test_moabs_wallclock_reason_makes_the_deletion_a_time_limit() -> None:
    # https://github.com/CoBrALab/MAGeTbrain/issues/20: a Moab job mail
    notice = (
        "PBS Job Id: 26066307.gpc-sched-ib0\njob deleted\nJob deleted at request of root@gpc-sched-ib0\n"
        "MOAB_INFO:  job exceeded wallclock limit"
    )
    assert verdict(notice) == ("scheduler-moab-wallclock", "scheduler", True)


def test_a_preemption_for_a_node_failure_is_the_node() -> None:
    # https://github.com/cBio/cbio-cluster/issues/187: an interactive GPU job deleted on gpu-2-17
    notice = (
        "PBS Job Id: 2600365.mskcc-fe1.local\nJob Name:   STDIN\nExec host:  gpu-2-17/5\njob deleted\n"
        "Job deleted at request of root@mskcc-fe1.local\njob preempted (node failure)"
    )
    assert verdict(notice) == ("scheduler-pbs-preempted-node-failure", "hardware", True)


def test_a_deletion_without_a_reason_stays_a_cancellation() -> None:
    assert verdict("Job deleted at request of alice@login01") == ("scheduler-pbs-deleted", "scheduler", False)
