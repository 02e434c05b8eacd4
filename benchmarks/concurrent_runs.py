"""Many concurrent runs on one host: the worker's, dev server's and local scheduler's CPU and
memory while they watch them, and failure -> advice / successor running when 100 of them fail
at once; then the same burst with a second worker. Several sizes, and an earlier commit side by
side, in one invocation.

    .venv/bin/python benchmarks/concurrent_runs.py [--runs 1000 [5000 ...]] [--burst 100]
        [--window 30] [--baseline REV [--baseline-runs 1000 ...]]

Run by hand, never in tests. Each measurement runs in its own process, with its own dev server
(SQLite in a temporary RECOVERY_HOME, free ports), its own local cluster (runs + 2 x burst + 8
nodes, so every failed run has a healthy node to restart on) and `python -m recovery.worker
worker` subprocesses on their own task queue, so it touches nothing else on the machine; it
cancels its runs and stops all of it at the end, on Ctrl-C or on error too. `--baseline REV`
measures REV too: a git worktree of it (under /tmp, removed afterwards) whose `recovery` comes
first on every process's path (PYTHONPATH; the worker runs from it), same scenario, same
machine, printed in the same table. Past 1,000 runs the workers get `max_runs` to match.

Each run is a 1-node job that prints a progress line every --progress-every seconds and sleeps
in between (idle between failures). Once every job runs and has reported progress, the
processes' CPU time and RSS are sampled from /proc for --window seconds (steady state). Then
--burst allocated nodes are set down at the same moment (`node-down`, as an operator or a dead
machine would), and the same sampling runs until every hit run has its successor running.
Failure -> advice recorded and failure -> successor running come from each run's status
milestones (`failure_observed` = the scheduler's end time of the failed attempt,
`advice_recorded`, `successor_running`). Then a second worker joins on the same task queue,
the benchmark waits until the first has handed its surplus of watches on (worker/sharing.py;
no hand-on for two of its looks), and the burst is repeated on other runs. The machine's load
average is printed beside each phase: the host is shared, and the figures move with it.

The output ends with where failure -> advice goes, from the hit runs' histories: by kind of wait
(the observer's watch completion; workflow tasks queued at the server and run in the worker,
local activities included; activities queued and running; each summed per run) and step by
step; and how many of the burst's workflow and activity tasks each worker took (the events'
`identity`), which shows a second worker's share.

One worker of 10,000 runs under 1 GiB: the workers cache 1,000 runs' workflows by default
(`cached_runs`, 44ead81), not every run watched. `--runs 10000 --burst 100 --window 60
--burst-timeout 300 --min-running 0.99 --cached-runs 1000` on 45650e0, 2026-12-05: started in 444 s, one worker: steady 10% / 1%, RSS 921 MiB (940 MiB in the
burst; 1,119 MiB with 2,500 cached), advice p50 3.4 s, p95 3.9 s, successor running 5.8 s /
6.5 s; the second worker: 9,000 watches handed on, settled after 289 s, then it took 385 of the
burst's 653 workflow tasks and 406 of its 700 activity tasks; RSS 867 / 354 MiB, advice p95
3.4 s, successor running p95 6.6 s. Again, on the default (44ead81, `--runs 1000 10000 --baseline
45650e0 --baseline-runs 1000`, load 3-4.5 in the one worker's phases): one worker RSS 928 MiB
(921 in the burst), advice p50 4.7 s, p95 5.1 s, successor running 7.4 s / 8.0 s: the burst's
runs are replayed (workflow tasks in the worker 1.6 s / 2.3 s, 1.1 s / 1.4 s with 2,500
cached); two workers 859 / 357 MiB, advice p95 3.8 s, successor running p95 7.2 s. A third run (the
command without --cached-runs): RSS 915 MiB, advice p95 4.9 s, successor running p95 8.7 s.

The burst's own latency at 10,000 runs, one worker (the worker's core metrics read by a probe
kept out of the project: the SDK's pollers had scaled down to one of each kind in the steady
state, and the burst's workflow tasks waited 0.58 s on average to be taken; a full read of
every job held the observer's look 1.2 s, and the watches woke 1.3 s after the failure).
2026-12-05, the same command three times on a loaded host (load 3-5): 85f7ff0, advice p50
3.6 s, p95 4.4 s, successor running 6.7 s / 7.9 s, RSS 918 MiB; with at least five workflow
pollers and the observer's log reads waiting while a recovery is under way (3ead9ff): 2.9 s /
3.5 s, 5.2 s / 5.9 s, 931 MiB (955 in the burst); with the periodic read of every job a slice
a look too (e528b47): 3.4 s / 4.2 s, 5.9 s / 7.0 s, 929 MiB (988 in the burst), its steady
window still taking the start-up's tail (worker 44 %, dev server 30 %). Two workers: advice p95
4.4 s, 3.1 s and 3.1 s.

One worker, then a second started beside it, after a busy worker began handing its surplus of
watches on and resetting those runs' stickiness (worker/sharing.py; 490230a against 25a0255),
2026-12-05, quiet host, `--runs 10000 --burst 100 --window 60 --burst-timeout 300 --min-running
0.99 --cached-runs 2500`: one worker: steady 10% / 1%, RSS 1,119 MiB (1,178), advice p50 2.1 s,
p95 2.9 s (2.9 s, 4.7 s), successor running 4.7 s / 5.1 s (5.8 s, 7.4 s); the second worker: 9,500
watches handed on, settled after 336 s, then it took 363 of the burst's 646 workflow tasks and
391 of its 699 activity tasks (0 of 642 and 0 of 700 before), burst CPU 33% / 35% where one
worker had 65%; advice p95 3.0 s, successor running p95 5.4 s.

The same command after the worker began handing freed pages back after each thaw, thawing
early once grown by 128 MiB (c471968), 2026-12-04: RSS 934 / 934 MiB steady, 936 / 951 MiB in
the burst, but advice p95 6.4 s: a full collection of 0.67 s (the collector's own, walking what
was newer than the frozen set) fell in the burst. After what is newer was also collected and
frozen at quiet moments (fc372ad), two runs (the host's own `kdamond` at about 10 % of a core,
load 2-4.4 from the benchmark): started in 545 s / 602 s, steady 8% / 8% / 1% and 9% / 9% / 1%,
RSS 940 / 917 MiB and 906 / 922 MiB (954 / 920 and 911 / 940 MiB in the burst), no collection
of 0.5 s or more in either burst, failure -> advice p50 3.2 s / 3.7 s, p95 3.8 s / 5.0 s,
successor running p95 7.0 s / 9.5 s, the second worker's share 53-57 %. A third run, with
`--baseline 168cdea` beside it (9d7af2c, the same worker code): this tree started in 508 s,
RSS 954 / 893 MiB, advice 3.0 s / 3.8 s, successor running 6.1 s / 7.0 s; 168cdea started in
542 s, RSS 1,036 / 1,058 MiB (a thaw in its window: 13% / 13%), advice 3.4 s / 4.4 s,
successor running 7.0 s / 8.0 s.

The same command after a run's first submit stopped counting as a recovery step for the GC thaw
(ac3bde3, no other load): the workers thawed during the start-up (3.6 s walks freeing 590,000-
670,000 objects, about every 5 minutes) where they had waited for it to end. Started in 513 s,
steady 12% / 12% / 1% (a thaw fell in the window), workers' RSS 1,041 / 1,039 MiB in the steady
window and 996 / 989 MiB in the burst, failure -> advice p50 3.0 s, p95 4.3 s, successor running
5.4 s / 7.2 s; workflow tasks queued 0.71 s / 1.53 s, the node history's 0.04 s / 0.27 s;
watch done -> diagnose scheduled 0.89 s / 1.25 s, `diagnose` 0.58 s / 0.88 s. Again (3e918af,
the same tree and command, no other load): started in 486 s, steady 11% / 11% / 1%, RSS
1,007 / 1,022 MiB (983 / 981 MiB in the burst), advice 2.8 s / 4.1 s, successor running 5.5 s /
6.8 s, the second worker's share 54-55 %.

Two workers from the start, after `diagnose` began asking the suspects itself beside its own
work (patch `suspects-in-diagnose`), a question rode on the node-history update already on its
way, and the node history's tasks went first (priority 1) (82b7ab8), 2026-12-03, the same
command (the unit tests ran during the start-up; load 1.7-3.3 during the steady and the burst
phases): started in 530 s, steady 7% / 7% / 1%, workers' RSS 1,153 / 1,131 MiB, failure ->
advice p50 4.3 s, p95 5.2 s, successor running 6.8 s / 7.8 s; the node history's workflow tasks
queued 0.04 s / 0.09 s, the runs' 0.58 s / 1.42 s; watch done -> diagnose scheduled 1.45 s /
2.34 s, `diagnose` 0.78 s / 1.60 s (the suspects' round trip inside it). The run before it
(baa6fe8's priority alone, helpers' unit tests during the burst, load 3.4-4.9) had the node
history's tasks queued 0.01 s / 0.65 s against the runs' 0.99 s / 1.86 s.

Two workers from the start, after a diagnosis stopped walking every node (a `NodeIndex`), hang
detection kept its learned timeout, and the observer gave the event loop back every 100
attempts it judges (issue 14j, 107433d; bf8cdec is the last column below), 2026-12-03, no other
load during the burst, the same command: started in 640 s, steady 9% / 8% / 1% of a core,
workers' RSS 1,047 / 1,055 MiB, failure -> advice p50 3.9 s, p95 5.2 s (6.7 s, 8.1 s), failure
-> successor running p50 7.1 s, p95 8.4 s (9.5 s, 10.8 s), `diagnose` running 0.32 s / 0.57 s
(1.34 s / 3.10 s), the second worker's share 57 %. py-spy on a worker in the burst before the
change: 28 % of its samples in `diagnose` walking 10,208 nodes, 38-58 % in the observer's looks.
The same code again with `--cached-runs 2000` (c250da5): RSS 1,012 / 1,036 MiB, advice p50 5.4 s,
p95 6.6 s, successor running 8.4 s / 9.97 s, two 0.7 s collections in the burst: back-to-back
runs differ by more than a second at p95. A third run (8e81fe4, `--cached-runs 2500`): RSS 973 /
1,017 MiB, advice 6.4 s / 7.6 s, successor running 8.9 s / 9.8 s, workflow tasks queued at the
server 1.6 s / 3.1 s (0.6 s / 1.4 s in the first run): the dev server is where the runs differ.

Two workers from the start, the worker's garbage collection timed and frozen (issue 14i,
9dbae79 before, bf8cdec after; 70aa6d6 froze but left the thaw's walk to the collector),
2026-12-03, no other load (load 2-4 from the benchmark itself), `--runs 10000 --burst 100
--window 60 --burst-timeout 300 --min-running 0.99 --cached-runs 2500 --two-from-start`:

                                            9dbae79              70aa6d6              bf8cdec
    start 10,000 runs                       1,522 s              638 s                610 s
    steady worker1 / worker2 / dev server   10% / 11% / 7%       9% / 10% / 1%        9% / 9% / 1%
    workers' RSS                            849 / 856 MiB        1,030 / 1,019 MiB    1,090 / 1,122 MiB
    failure -> advice p50 / p95             9.9 s / 11.0 s       5.0 s / 8.5 s        6.7 s / 8.1 s
    failure -> successor running p50 / p95  12.9 s / 14.1 s      8.7 s / 10.2 s       9.5 s / 10.8 s
    GC pauses >= 0.5 s in the burst         2.0 s, 3.7 s         0.7 s                0.7 s
    the burst's tasks by worker2            55 %                 48 %                 52 %

(The GC row is read from the workers' logs by time; the table these runs printed counted
across both workers' logs wrongly, fixed since.) Without freezing every worker stood still 1-3 s
in a full collection about every 40 s; with it, the whole-heap walk comes every 5 minutes
(4-6 s at 5,000 runs a worker). One worker at 4f449d1, same command without --two-from-start:
started in 452 s (1,415 s at 15dd5a0), steady 20% / 11% of a core, RSS 1.79 GiB (1.11 GiB),
advice p50 7.1 s, p95 8.7 s (13.9 s, 17.2 s), successor running 11.3 s, 12.0 s (19.0 s, 22.0 s);
a second worker added later still took none of the second burst.

With the local scheduler's nodes read as a list-and-watch, the usable nodes sent as a count,
the observer judging only what changed and reading a log with one stat when it has not grown
(issue 14h, 8061591..15dd5a0), 2026-12-03, helpers' probes on the host (load 2.0-4.4),
`--runs 10000 --burst 100 --window 60 --burst-timeout 300 --min-running 0.99 --cached-runs 2500`:

    start 10,000 runs                       1,415 s                     vs 772 s (load differs)
    steady worker / dev server / daemon     18% / 9% / 0% of a core     vs 36% / 34% / - *
    worker RSS                              1.11 GiB                    vs 1.12 GiB
    failure -> advice, 1 worker             p50 13.9 s, p95 17.2 s      vs p50 23.4 s, p95 23.8 s
    failure -> successor running, 1 worker  p50 19.0 s, p95 22.0 s      vs p50 26.7 s, p95 27.6 s
    a second burst, 2 workers               advice p95 12.1 s, successor p95 15.2 s
                                                                        vs 14.9 s, 21.1 s

`diagnose` ran 1.3 s (median; 3.2 s before), the workflow tasks in the worker 3.8 s; in the
first burst the watches completed 5.4 s after the failure (0.24 s in the second). The second
worker still took none of the burst's tasks. (* that window was not quiet: see below.)
The same tree at 1,000 (`--runs 1000 --burst 100 --window 30 --baseline 494ee99`, load
0.5-1.5), this tree vs 494ee99: steady worker 5% vs 6%, RSS 391 vs 384 MiB; advice p50 2.3 s,
p95 2.7 s vs 2.9 s, 3.6 s; successor p50 4.0 s, p95 5.0 s vs 4.7 s, 5.4 s; starting the 1,000
runs took 29.0 s vs 14.9 s (measured once, first, right after a test suite; not explained).

With the dev server keeping 32,768 workflows' state in memory (the CLI's 8,192 thrashed at
10,000 runs), a local watch heartbeat of 1,800 s and an hourly re-arm spread per run (issue
14g, a8d679b and 6c02e92), 2026-12-03, helpers' probes running on the host (load
4.0-6.4), `--runs 10000 --burst 100 --window 60 --burst-timeout 300 --min-running 0.99`:

    start 10,000 runs                       1,179 s (9,999 running)     vs 1,432 s
    steady worker / dev server / daemon     18% / 4% / 0% of a core     vs 36% / 86% / -
    worker RSS                              2.3 GiB                     vs 2.2 GiB
    burst of 100 advised                    100 of 100                  vs 17 of 100 in 300 s
    failure -> advice, 1 worker             p50 32.6 s, p95 35.5 s
    failure -> successor running, 1 worker  p50 40.8 s, p95 50.0 s
    a second burst, 2 workers               advice p95 17.8 s, successor p95 22.0 s

In the 1-worker burst the `diagnose` activity ran 14.9 s (median), the observer's completion of
the watches 4.7 s, suspects 5.3 s: the worker is the limit now, not the server. The second worker took none of the
second burst's tasks (its runs were cached on the first); that burst was faster on a quieter
host (load 2.9 against 5.5), not by the second worker.

run outside the sandbox (issue 14f, 5798b92 and 3a7dfb2), 2026-12-03, load 1.9-2.9,
`--runs 1000 --burst 100 --window 30 --baseline 52da7bd`, this tree vs 52da7bd:

    steady worker / dev server / daemon     6% / 1% / 0%           vs 7% / 1% / 0% of a core
    worker RSS                              383 MiB                vs 672 MiB
    burst worker CPU                        59%                    vs 81%
    failure -> advice, 1 worker             p50 2.6 s, p95 4.1 s   vs p50 2.8 s, p95 3.2 s
    failure -> successor running, 1 worker  p50 5.4 s, p95 6.5 s   vs p50 5.8 s, p95 6.3 s

The same tree at 10,000 runs (`--runs 10000 --burst 100 --window 30 --burst-timeout 300
--min-running 0.99`, load 3.3-4.5): 10,000 started in 1,432 s; steady worker 36 %, dev server
86 % of a core, worker RSS 2.2 GiB (3.8 GiB at e9d37e8); the dev server saturated, 17 of the
first burst's 100 runs advised within 300 s (the worker's log; the status queries the
benchmark reads them by timed out), a workflow task took 105 s.

With the diagnoses of a burst sharing one node read, the observer's look walking its watches
once, and a dead local worker's watches handed on at once so that local watches beat every
2.5 min again (issue 14e, b17e2fe), 2026-12-02, helpers' tests running on the host (load
2.7-4.3), `--runs 1000 --burst 100 --window 30 --baseline bae55c0`, this tree vs bae55c0:

    steady worker / dev server / daemon     7% / 2% / 0%           vs 23% / 12% / 1% of a core
    worker RSS                              692 MiB                vs 660 MiB
    failure -> advice, 1 worker             p50 2.4 s, p95 2.8 s   vs p50 8.7 s, p95 9.4 s
    failure -> successor running, 1 worker  p50 5.4 s, p95 6.4 s   vs p50 15.5 s, p95 16.9 s
    the same, 2 workers: advice p95         8.5 s                  vs 26.3 s (load 4.0 / 6.2)
    failure -> watch completion (median)    0.15 s                 vs 0.32 s

The same tree at 5,000 runs (`--runs 5000 --burst 100 --window 30 --burst-timeout 300
--min-running 0.99`, quiet host, load 2.3-3.4): 5,000 started in 336 s; steady worker 22 %,
dev server 15 % of a core, worker RSS 2.1 GiB; 1 worker: advice p50 5.4 s, p95 6.0 s,
successor running p50 9.0 s, p95 11.0 s; 2 workers: advice p95 11.7 s (the second worker took
none of the burst's tasks: its runs were all cached on the first). The 2-worker burst is always
the second one, on a cluster with the first burst's 100 nodes down and their failures in the
node history (its `diagnose` took 5.3 s against 1.8 s): the order, not only the worker, is in
that comparison.

With the observer's list-and-watch of the local scheduler and local watches beating every
2.5 min (issue 14d, ab49c78), 2026-12-02, quiet host (load 1.6-3.1), `--runs 1000 --burst 100
--window 30 --baseline bae55c0`, this tree vs bae55c0:

    steady worker / dev server / daemon     9% / 2% / 0%           vs 30% / 14% / 1% of a core
    worker RSS                              703 MiB                vs 687 MiB
    failure -> advice, 1 worker             p50 6.2 s, p95 8.1 s   vs p50 8.3 s, p95 11.5 s
    failure -> successor running, 1 worker  p50 10.1 s, p95 11.8 s vs p50 14.8 s, p95 17.0 s
    the same, 2 workers: advice p95         9.1 s                  vs 10.8 s
    failure -> watch completion (median)    0.24 s                 vs 1.22 s (an earlier run of bae55c0)

At 10,000 runs (`--runs 10000 --burst 100 --window 30 --burst-timeout 300 --min-running 0.99`,
e9d37e8 + the benchmark change, load 3.4-5): 10,000 started in 1,119 s, 9,966 jobs running (the
dev server never completed or timed out the first workflow task of the other 34); steady
worker 38 %, dev server 82 % of a core, worker RSS 3.8 GiB; both bursts of 100 had no advice
after 300 s (status queries timed out; the worker was 28 % busy, the dev server 87 %, its
SQLite store operations past their deadlines). The dev server's SQLite is the limit here.
The local watches' 300 s heartbeat timeout was taken back to 60 s afterwards (a killed worker's
runs must move within a minute on the embedded default), and put back at 300 s with b17e2fe
(a worker of the same host takes a dead worker's watches at once).

With fewer round trips per recovery (patch `fewer-round-trips`) and the worker and dev server
sized for bursts (issue 14c), 2026-12-02, load 3.5-5 (`--runs 300 1000 --burst 100 --window 15
--burst-timeout 200 --baseline bd93532 --baseline-runs 300`; the closing note has the table):

    300 runs, 100 fail at once       advice p50 4.5 s, p95 5.0 s; successor running p95 8.9 s
    1000 runs, 100 fail at once      advice p50 9.3 s, p95 11.0 s; successor running p95 16.7 s
    (bd93532 at 300 runs, 50 at once: advice p95 170 s, 10 runs without advice after 200 s)
    where it goes at 1000 (per run, median): watch completion 1.2 s, workflow tasks queued 2.0 s
    and in the worker 2.2 s (the local suspect_nodes: one node-history update, ~2 s), activities
    running 2.3 s (diagnose 1.5 s), activities queued 0 s (eager dispatch).
    A second worker took 3 % of the burst's tasks at 1000 runs (27 workflow tasks moved off the
    busy first worker after the 3 s sticky wait), none at 300: the first kept up. With eager
    activity dispatch off it took 46 % of the activities, each ~1 s slower; the burst was slower.

What it found with the observer (issue 14a) and the SQLite local scheduler and node-history
update (14b), 2026-12-02, on a host whose load average was 10-26 (four other sessions' test
suites and benchmarks on its 2 cores), so the figures say more about that load than about the
code:

    1000 runs, this tree           steady: worker / dev server / daemon CPU, worker RSS
      1 worker                       16% / 16% / 1% of a core, 521 MiB   (load 9.7)
      2 workers                      6% + 4% / 21% / 1%, 544 + 185 MiB   (load 19.3)
    all 1000 jobs running 805 s after the first start (the daemon used 7 s of CPU for it: the
    time went in the worker's and dev server's workflow tasks, starved of CPU); e910cbd's
    daemon had 342 of 1000 running after 556 s (this tree: 885), where its run was stopped.
    The bursts of 100 did not finish in 300 s (load 20-26): workflow tasks took minutes
    (`watch_attempt done -> suspect_nodes scheduled` median 240 s), 688 watches lost their
    heartbeat and were retried, status queries timed out. suspect_nodes itself took 5 s median.

Side by side at 200 runs, bursts of 50 (`--runs 200 --burst 50 --window 15 --burst-timeout
150 --baseline e910cbd`, load 4-10), this tree vs e910cbd:

    steady worker / dev server / daemon     7% / 5% / 0%          vs 17% / 20% / 2% of a core
    failure -> advice, 1 worker             p50 18.6 s, p95 22.6 s vs p50 59.7 s, p95 111.6 s
    failure -> successor running, 1 worker  p50 27.0 s, p95 32.4 s vs p50 89.0 s, p95 133.1 s
    the same, 2 workers                     p50 35.5 s, p95 39.6 s vs p50 124.3 s, p95 164.8 s
    watches lost to heartbeat timeout       0 and 0                vs 77 and 64
    The time still goes in the gaps between a run's activities (3-5 s each: one workflow task
    through the dev server and back, on a loaded host), not in the activities (0.2-3 s).

Earlier (2 cores shared with other work, 24 GiB; 2026-11-29), the code of e910cbd:

    runs  steady: worker / dev server / daemon CPU, worker RSS   burst of 50: failure -> advice
     250    19% / 20% / 4% of a core, 157 MiB                    median  6.1 s, p95   8.4 s
     500    41% / 40% / 6% of a core, 228 MiB                    median 10.6 s, p95  15.0 s
    1000    71% / 63% / 9% of a core, 368 MiB                    median 63 s,   p95 105 s

- Idle runs are not free: each keeps one `watch_attempt` activity that wakes every 0.25 s (a
  coalesced scheduler read, a heartbeat, a look at its output), and the dev server keeps its
  heartbeat timer in SQLite. Steady cost grows linearly, ~0.07 % of a core per run in the
  worker and ~0.06 % in the dev server; at 1000 runs the two use ~1.35 of the 2 cores.
- Failure -> advice is four activities (suspect_nodes, diagnose, report_failure,
  record_advice) that each run in 0.1-1.5 s; the time goes in the gaps between them
  (activity done -> next scheduled: one workflow task through the dev server and back), ~1 s
  each at 250 runs, 1-2 s at 500, ~10 s at 1000. The cluster's one NodeHistory workflow takes every
  failure's signal and query: at 1000 runs its queries fail with "Workflow is busy" or time
  out (NodeHistoryUnavailable) and report_failure takes 10 s.
- The limit on this machine is between 500 and 1000 runs: at 1000 the burst pushes
  `watch_attempt` heartbeats past their 10 s timeout (the local tuning), the server retries
  ~700 watches at once, and that churn feeds itself (the second burst met it again). A worker
  also has hard caps at this size: max_concurrent_activities=1000 (worker/run_worker.py) and
  the SDK's 1000 cached workflows, so one worker cannot hold more than ~1000 watches at all.
- A second worker changes nothing for runs that are already running: their workflows stay
  cached (sticky) on the first worker, their activities are dispatched to it eagerly, and a
  running watch never moves. At 250 and 500 runs worker 2 used 0 % CPU and the burst's
  latency did not improve. At 1000 it only got work because watches were retried (the meltdown above): the
  median went 63 -> 49 s, the p95 got worse. On one 2-core host the dev server is shared, so
  a second worker cannot add capacity; it helps on its own machine, for new runs.
- Starting is slow too: 1000 runs started in 38 s, but their jobs all ran only after 233 s;
  the local cluster daemon rewrites (and fsyncs) its whole state file on every change, so
  each change costs in proportion to the job table (50 node-downs take ~3 s in a row).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import itertools
import json
import os
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# The code measured: this tree, or (for --baseline) a worktree of an earlier commit. Its
# `recovery` comes first on the path, here and in every process started (PYTHONPATH).
CODE = Path(os.environ.get("RECOVERY_BENCH_CODE", str(ROOT)))
sys.path[:0] = [str(CODE), str(HERE)]

from recovery_latency import percentile, setup_env  # noqa: E402

if TYPE_CHECKING:
    from temporalio.client import Client

    from recovery.workflows.models import JobObservation, RunStatus

TICKS = os.sysconf("SC_CLK_TCK")
JOB = """#!/bin/bash
#SBATCH --nodes=1
# Idle between failures: a progress line now and then, asleep otherwise. It sleeps in bash's own
# `read -t` on a pipe nobody writes (no `sleep` process a line: 10,000 jobs would fork 500 a second).
exec 3<> <(:)
step=0
while true; do
  step=$((step + 1))
  echo "recovery-progress step=$step rank=$SLURM_PROCID"
  read -r -t {every} -u 3 || true
done
"""


# --- /proc sampling ----------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = text[text.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def rss_mib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


@dataclass
class Usage:
    """One process over one window: mean and peak (1 s) CPU in % of a core, peak RSS."""

    cpu_mean: float = 0.0
    cpu_peak: float = 0.0
    rss_peak: float = 0.0


@dataclass
class Sampler:
    pids: dict[str, int]
    usage: dict[str, Usage] = field(default_factory=dict)
    _task: asyncio.Task[None] | None = None
    _stop: asyncio.Event = field(default_factory=asyncio.Event)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> dict[str, Usage]:
        self._stop.set()
        if self._task is not None:
            await self._task
        return self.usage

    async def _run(self) -> None:
        start = time.monotonic()
        first = {name: cpu_seconds(pid) for name, pid in self.pids.items()}
        last, last_t = dict(first), start
        self.usage = {name: Usage(rss_peak=rss_mib(pid)) for name, pid in self.pids.items()}
        while not self._stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), 1.0)
            now = time.monotonic()
            for name, pid in self.pids.items():
                cpu, use = cpu_seconds(pid), self.usage[name]
                use.cpu_peak = max(use.cpu_peak, 100 * (cpu - last[name]) / max(now - last_t, 1e-3))
                use.cpu_mean = 100 * (cpu - first[name]) / max(now - start, 1e-3)
                use.rss_peak = max(use.rss_peak, rss_mib(pid))
                last[name] = cpu
            last_t = now


# --- the pieces it starts ----------------------------------------------------------------


# A worker watches 1,000 runs at most by default (config `max_runs`, of the observer's version).
DEFAULT_MAX_RUNS = 1000


def start_worker(home: Path, n: int, runs: int, cached_runs: int | None = None) -> subprocess.Popen[bytes]:
    log = (home / f"worker{n}.log").open("ab")
    argv = [sys.executable, "-m", "recovery.worker", "worker"]
    lines = [f"max_runs: {runs + 500}"] if runs > DEFAULT_MAX_RUNS else []
    lines += [f"cached_runs: {cached_runs}"] if cached_runs else []  # a tree from before it rejects the key
    if lines:
        config = home / "worker.yaml"
        config.write_text("\n".join(lines) + "\n")
        argv += ["--config", str(config)]
    return subprocess.Popen(
        argv,
        cwd=CODE,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        start_new_session=True,
    )


def stop_worker(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


def write_job(home: Path, every: float) -> Path:
    workdir = home / "job"
    workdir.mkdir()
    script = workdir / "job.sbatch"
    script.write_text(JOB.format(every=every))
    return script


async def submit_all(client: Client, script: Path, count: int) -> dict[str, str]:
    """Start `count` runs, 50 at a time; returns run id -> name."""
    from temporalio.exceptions import WorkflowAlreadyStartedError
    from temporalio.service import RPCError, RPCStatusCode

    from recovery.client import runs
    from recovery.client.submit import build_spec

    gate = asyncio.Semaphore(50)
    started: dict[str, str] = {}
    # A dev server saturated by thousands of runs answers a start after the client's 10 s (at
    # 5,280 of 10,000 once, on a loaded host): the start is by run id, so it is tried again, and
    # a run the timed-out call did start counts as started.
    late = (RPCStatusCode.CANCELLED, RPCStatusCode.DEADLINE_EXCEEDED, RPCStatusCode.UNAVAILABLE)

    async def one(i: int) -> None:
        spec = build_spec(str(script), [], "local", "default", f"idle{i}", None, script.parent)
        async with gate:
            for tries in itertools.count(1):
                try:
                    await runs.start_run(client, spec)
                    break
                except WorkflowAlreadyStartedError:
                    break
                except RPCError as e:
                    if e.status not in late or tries == 10:
                        raise
                    await asyncio.sleep(tries)
        started[spec.run_id] = spec.name

    await asyncio.gather(*(one(i) for i in range(count)))
    return started


def run_of(job: JobObservation) -> str:
    return job.token.split(":")[1]  # recovery:RUN_ID:ATTEMPT


async def cluster_jobs() -> list[JobObservation]:
    from recovery.activities.schedulers.local import launcher as local_cluster

    return list((await asyncio.to_thread(local_cluster.status)).jobs)


async def wait_all_running(count: int, timeout: float, enough: float = 1.0) -> float:
    """Until `count` jobs run (or the `enough` share of them, once no more has started for a
    minute); returns how long that took."""
    start = last_change = time.monotonic()
    seen = -1
    while time.monotonic() - start < timeout:
        jobs = await cluster_jobs()
        running = [j for j in jobs if j.state.value == "RUNNING"]
        if len(running) != seen:
            seen, last_change = len(running), time.monotonic()
        stalled = time.monotonic() - last_change > 60
        if len(running) >= count or (stalled and len(running) >= enough * count):
            if len(running) < count:
                print(f"  going on with {len(running)}/{count}: no more started in 60 s", flush=True)
            return time.monotonic() - start
        print(f"  {len(running)}/{count} jobs running after {time.monotonic() - start:.0f}s", flush=True)
        await asyncio.sleep(5)
    raise TimeoutError(f"not all {count} jobs ran within {timeout:.0f}s")


# --- one measurement -------------------------------------------------------------------------


@dataclass
class Phase:
    workers: int
    steady: dict[str, Usage]
    burst: dict[str, Usage]
    advice: list[float]
    successor: list[float]
    burst_seconds: float
    missing: int
    stages: dict[str, list[float]] = field(default_factory=dict)
    tasks: dict[str, int] = field(default_factory=dict)  # the hit runs' tasks from the failure on, per worker
    lost_watches: int = 0  # watch_attempt tries the server gave up on (heartbeat timeout) and retried
    long_collections: list[float] = field(default_factory=list)  # the workers' GC pauses >= 0.5 s, seconds
    load_steady: tuple[float, float, float] = (0.0, 0.0, 0.0)  # the machine's load average, at the end
    load_burst: tuple[float, float, float] = (0.0, 0.0, 0.0)
    handed_on: int = 0  # watches the first worker handed on after the second joined (worker/sharing.py)
    sharing_seconds: float = 0.0  # from the second worker's start to the last watch handed on


async def steady_state(pids: dict[str, int], window: float) -> dict[str, Usage]:
    sampler = Sampler(pids)
    sampler.start()
    await asyncio.sleep(window)
    return await sampler.stop()


def lost_watches(logs: list[Path]) -> int:
    """Watches a worker was told to drop: the server timed out their heartbeat and retried them."""
    lost = 0
    for path in logs:
        with contextlib.suppress(OSError), path.open(errors="replace") as handle:
            lost += sum(1 for line in handle if "'watch_attempt'" in line and "Activity cancelled" in line)
    return lost


def handed_on(log: Path) -> int:
    """Watches a worker handed on to share them out (worker/sharing.py), from its log."""
    total = 0
    with contextlib.suppress(OSError), log.open(errors="replace") as handle:
        for line in handle:
            if "watches handed on" in line:
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    total += int(json.loads(line)["count"])
    return total


async def sharing_settled(log: Path, still: float, timeout: float) -> tuple[int, float]:
    """Wait until the worker has handed no watch on for `still` seconds (a tree without sharing:
    `still` seconds); how many it handed on, and when the last went (seconds from now)."""
    start = last = time.monotonic()
    seen = handed_on(log)
    while time.monotonic() - last < still and time.monotonic() - start < timeout:
        await asyncio.sleep(2)
        if (now := handed_on(log)) != seen:
            seen, last = now, time.monotonic()
    return seen, last - start


def long_collections(logs: list[Path]) -> list[list[float]]:
    """The seconds of each long garbage collection each worker logged (worker/gc_pauses.py), per log."""
    pauses: list[list[float]] = []
    for path in logs:
        pauses.append([])
        with contextlib.suppress(OSError), path.open(errors="replace") as handle:
            for line in handle:
                if "long garbage collection" in line:
                    with contextlib.suppress(ValueError, KeyError, TypeError):
                        pauses[-1].append(float(json.loads(line)["seconds"]))
    return pauses


async def burst(
    client: Client, pids: dict[str, int], victims: list[JobObservation], timeout: float, logs: list[Path]
) -> Phase:
    """Set the victims' nodes down at once; wait until every run has its successor running."""
    from recovery.activities.schedulers.local import LocalScheduler
    from recovery.activities.schedulers.local import launcher as local_cluster

    sampler = Sampler(pids)
    sampler.start()
    lost_before = lost_watches(logs)
    collections_before = [len(pauses) for pauses in long_collections(logs)]
    start = time.monotonic()
    began = datetime.now(UTC)
    await asyncio.gather(*(asyncio.to_thread(local_cluster.node_down, j.nodes[0], "benchmark") for j in victims))
    scheduler = LocalScheduler()
    ids = [j.job_id for j in victims]
    while time.monotonic() - start < timeout:
        seen = await scheduler.observe(ids)
        if all(o.restart_count >= 1 and o.state.value == "RUNNING" for o in seen.values()):
            break
        await asyncio.sleep(1)
    elapsed = time.monotonic() - start
    usage = await sampler.stop()
    statuses = await settled_statuses(client, victims)
    advice: list[float] = []
    successor: list[float] = []
    for status in statuses:
        if status is None:
            continue
        marks = {m.name: m.at for m in status.milestones if m.attempt_index == 0}
        failed = marks.get("failure_observed")
        if failed is None:
            continue
        if "advice_recorded" in marks:
            advice.append((marks["advice_recorded"] - failed).total_seconds())
        if "successor_running" in marks:
            successor.append((marks["successor_running"] - failed).total_seconds())
    phase = Phase(0, {}, usage, advice, successor, elapsed, len(victims) - len(advice))
    phase.lost_watches = lost_watches(logs) - lost_before
    phase.long_collections = [
        seconds
        for pauses, before in zip(long_collections(logs), collections_before, strict=True)
        for seconds in pauses[before:]
    ]
    workers = {str(pid): name for name, pid in pids.items() if name.startswith("worker")}
    for status in statuses:
        if status is not None:
            await stages(client, status, phase.stages, workers, phase.tasks)
    await entity_tasks(client, began, phase.stages)
    return phase


async def entity_tasks(client: Client, since: datetime, into: dict[str, list[float]]) -> None:
    """The node history entity's workflow tasks from `since` on: every run's suspects and
    reports wait for them (each update is answered in one)."""
    from temporalio.api.enums.v1 import EventType

    from recovery.workflows.node_history import history_id

    history = await client.get_workflow_handle(history_id("local")).fetch_history()
    scheduled: dict[int, datetime] = {}
    for event in history.events:
        at = event.event_time.ToDatetime().replace(tzinfo=UTC)
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
            scheduled[event.event_id] = at
        elif event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED and at >= since:
            queued = at - scheduled.get(event.workflow_task_started_event_attributes.scheduled_event_id, at)
            into.setdefault("node history entity: workflow tasks queued", []).append(queued.total_seconds())


# Where failure -> advice goes: the run's history, from the failure to record_advice completed.
STEPS = ("suspect_nodes", "diagnose", "report_failure", "record_advice")
# The same window by kind of wait, each summed over the run's events in it (concurrent ones add up).
KINDS = (
    "watch completion (observer): failure -> watch_attempt done",
    "workflow tasks: queued (scheduled -> started)",
    "workflow tasks: in the worker (started -> completed, local activities included)",
    "activities: queued (scheduled -> started)",
    "activities: running (started -> completed)",
)


async def stages(
    client: Client, status: RunStatus, into: dict[str, list[float]], workers: dict[str, str], tasks: dict[str, int]
) -> None:
    """The run's failure -> advice as steps (activity by activity) and as kinds of wait; and, from
    the failure on, how many workflow and activity tasks each worker (by its `identity`) took."""
    from temporalio.api.enums.v1 import EventType

    marks = {m.name: m.at for m in status.milestones if m.attempt_index == 0}
    failed = marks.get("failure_observed")
    if failed is None:
        return
    history = await client.get_workflow_handle(status.run.id).fetch_history()
    names: dict[int, str] = {}
    points: dict[str, float] = {}  # "<activity> scheduled|started|done" -> seconds after the failure
    opened: dict[int, float] = {}  # event id of a scheduled/started event -> seconds after the failure
    started_by: dict[int, str] = {}  # scheduled event id -> the identity of the worker that started it
    kinds = dict.fromkeys(KINDS, 0.0)
    advised = False
    for event in history.events:
        at = (event.event_time.ToDatetime().replace(tzinfo=failed.tzinfo) - failed).total_seconds()
        kind = event.event_type
        if kind == EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED and at >= 0:
            _count_task(tasks, workers, event.workflow_task_started_event_attributes.identity, "workflow tasks")
        elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED and at >= 0:
            _count_task(tasks, workers, event.activity_task_started_event_attributes.identity, "activity tasks")
        if advised:
            continue
        opened[event.event_id] = at
        if kind == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            names[event.event_id] = name = event.activity_task_scheduled_event_attributes.activity_type.name
            if at >= 0 and name in STEPS:
                points.setdefault(f"{name} scheduled", at)
        elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            attrs = event.activity_task_started_event_attributes
            name = names.get(attrs.scheduled_event_id, "")
            started_by[attrs.scheduled_event_id] = attrs.identity
            if at >= 0 and name in STEPS:
                points.setdefault(f"{name} started", at)
                kinds[KINDS[3]] += at - opened[attrs.scheduled_event_id]
        elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            attrs_done = event.activity_task_completed_event_attributes
            name = names.get(attrs_done.scheduled_event_id, "")
            if at >= 0 and (name in STEPS or name == "watch_attempt"):
                points.setdefault(f"{name} done", at)
            if at >= 0 and name == "watch_attempt":  # a watch started long before: whose observer woke it
                _count_task(tasks, workers, started_by.get(attrs_done.scheduled_event_id, ""), "watch completions")
            if at >= 0 and name in STEPS:
                kinds[KINDS[4]] += at - opened.get(attrs_done.started_event_id, at)
            advised = name == "record_advice" and at >= 0
        elif kind == EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED and at >= 0 and "watch_attempt done" in points:
            scheduled = opened.get(event.workflow_task_started_event_attributes.scheduled_event_id, at)
            kinds[KINDS[1]] += at - max(scheduled, points["watch_attempt done"])
        elif kind == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED and at >= 0 and "watch_attempt done" in points:
            started = opened.get(event.workflow_task_completed_event_attributes.started_event_id, at)
            kinds[KINDS[2]] += at - max(started, points["watch_attempt done"])
        elif kind == EventType.EVENT_TYPE_MARKER_RECORDED and at >= 0:
            local = _local(event.marker_recorded_event_attributes)
            if local is not None:
                points.setdefault(f"{local} done (local)", at)
    if "watch_attempt done" in points:
        kinds[KINDS[0]] = points["watch_attempt done"]
    for name, value in kinds.items():
        into.setdefault(f"by kind: {name}", []).append(value)
    order = ["failure", "watch_attempt done", "suspect_nodes done (local)", "diagnose done (local)"]
    order += [f"{n} {w}" for n in STEPS for w in ("scheduled", "started", "done")]
    points["failure"] = 0.0
    seen = [p for p in order if p in points]
    for before, after in itertools.pairwise(seen):
        into.setdefault(f"{before} -> {after}", []).append(points[after] - points[before])


def _local(marker: Any) -> str | None:
    """The type of the local activity whose marker this is (core's JSON marker data): diagnose
    since `diagnose-in-task`, suspect_nodes in runs from before `suspects-in-diagnose`."""
    if marker.marker_name != "core_local_activity" or "data" not in marker.details:
        return None
    kind = json.loads(marker.details["data"].payloads[0].data).get("activity_type")
    return str(kind) if kind else None


def _count_task(tasks: dict[str, int], workers: dict[str, str], identity: str, what: str) -> None:
    """One task taken by the worker whose identity (`pid@host`) this is."""
    pid = identity.split("@", 1)[0]
    key = f"{what} by {workers.get(pid, 'another process')}"
    tasks[key] = tasks.get(key, 0) + 1


async def settled_statuses(
    client: Client, victims: list[JobObservation], patience: float = 60
) -> list[RunStatus | None]:
    """The victims' statuses once each has recorded its successor running (the scheduler can
    show it running a moment before the run's verify_successor records it), or after `patience`."""
    deadline = time.monotonic() + patience
    while True:
        statuses = await asyncio.gather(*(_status(client, run_of(j)) for j in victims))
        done = [s for s in statuses if s is not None and any(m.name == "successor_running" for m in s.milestones)]
        if len(done) == len(victims) or time.monotonic() > deadline:
            return statuses
        await asyncio.sleep(2)


async def _status(client: Client, run_id: str) -> RunStatus | None:
    from recovery.client import runs

    try:
        return await runs.query_status(client, run_id, rpc_timeout=30.0)
    except runs.RunError as e:
        print(f"  {e}", file=sys.stderr)
        return None


async def cancel_all(client: Client, run_ids: list[str]) -> None:
    from recovery.client import runs

    gate = asyncio.Semaphore(50)

    async def one(run_id: str) -> None:
        async with gate:
            with contextlib.suppress(Exception):
                await runs.signal_run(client, run_id, "cancel")

    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.gather(*(one(r) for r in run_ids)), 120)


# --- the benchmark ---------------------------------------------------------------------------


@dataclass
class Rig:
    home: Path
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)
    cluster: bool = False
    server: bool = False


async def measure(args: argparse.Namespace, rig: Rig) -> tuple[list[Phase], dict[str, float]]:
    from recovery.activities.schedulers.local import launcher as local_cluster
    from recovery.client.temporal_client import connect
    from recovery.worker.devserver import DevServer

    server = DevServer.from_env()
    rig.server = True
    server.start(timeout=60)
    rig.cluster = True
    local_cluster.start(args.runs + 2 * args.burst + 8, timeout=120)
    rig.workers.append(start_worker(rig.home, 1, args.runs, args.cached_runs))
    if args.two_from_start:  # both take runs as they start: each holds about half
        rig.workers.append(start_worker(rig.home, 2, args.runs, args.cached_runs))
    client = await connect()
    script = write_job(rig.home, args.progress_every)

    t0 = time.monotonic()
    run_ids = await submit_all(client, script, args.runs)
    submitted = time.monotonic() - t0
    print(f"started {len(run_ids)} runs in {submitted:.1f}s", flush=True)
    ran = await wait_all_running(args.runs, timeout=args.runs * 3.0 + 300, enough=args.min_running)
    settle = max(10.0, 2 * args.progress_every)
    await asyncio.sleep(settle)  # every job has printed its first progress line, the watch saw it
    facts = {"start runs": submitted, "all jobs running": submitted + ran}

    pids = {"worker1": rig.workers[0].pid, "daemon": local_cluster.daemon_pid() or 0, "dev server": server.pid() or 0}
    jobs = [j for j in await cluster_jobs() if j.state.value == "RUNNING"]
    victims = [jobs[i * len(jobs) // (2 * args.burst)] for i in range(2 * args.burst)]

    if args.two_from_start:
        pids = {"worker1": rig.workers[0].pid, "worker2": rig.workers[1].pid, **pids}
    rounds = [(2, victims[0::2])] if args.two_from_start else [(1, victims[0::2]), (2, victims[1::2])]
    phases: list[Phase] = []
    for n, group in rounds:
        shared = (0, 0.0)
        if n == 2 and not args.two_from_start:
            rig.workers.append(start_worker(rig.home, 2, args.runs, args.cached_runs))
            pids = {"worker1": rig.workers[0].pid, "worker2": rig.workers[1].pid, **pids}
            print("2 worker(s): waiting for the first to hand on its surplus of watches", flush=True)
            # Two of the first worker's sharing looks (15 s each) without a watch handed on.
            shared = await sharing_settled(rig.home / "worker1.log", still=35.0, timeout=900.0)
        print(f"{n} worker(s): steady state for {args.window:.0f}s", flush=True)
        steady = await steady_state(pids, args.window)
        load_steady = os.getloadavg()
        print(f"{n} worker(s): {len(group)} nodes down at once", flush=True)
        logs = [rig.home / f"worker{i + 1}.log" for i in range(n)]
        phase = await burst(client, pids, group, args.burst_timeout, logs)
        phase.workers, phase.steady = n, steady
        phase.handed_on, phase.sharing_seconds = shared
        phase.load_steady, phase.load_burst = load_steady, os.getloadavg()
        phases.append(phase)
        print(f"  advice for {len(phase.advice)}/{len(group)} runs, burst over in {phase.burst_seconds:.1f}s")

    print("cancelling the runs", flush=True)
    await cancel_all(client, list(run_ids))
    return phases, facts


def cleanup(rig: Rig) -> None:
    from recovery.activities.schedulers.local import launcher as local_cluster
    from recovery.worker.devserver import DevServer

    for proc in rig.workers:
        with contextlib.suppress(Exception):
            stop_worker(proc)
    if rig.cluster:
        with contextlib.suppress(Exception):
            local_cluster.stop(timeout=60)
    if rig.server:
        with contextlib.suppress(Exception):
            DevServer.from_env().stop()


def wind_down(rig: Rig, keep_home: bool) -> None:
    """Stop what the benchmark started; keep RECOVERY_HOME (logs) if asked or after a failure."""
    cleanup(rig)
    if keep_home:
        print(f"RECOVERY_HOME kept: {rig.home}", file=sys.stderr)
    else:
        shutil.rmtree(rig.home, ignore_errors=True)


def leave(code: int) -> NoReturn:
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # see shared notes: temporalio's runtime may abort at interpreter exit


def _fmt(values: list[float], fn: str) -> str:
    if not values:
        return "-"
    if fn == "median":
        return f"{statistics.median(values):.2f}s"
    if fn == "p95":
        return f"{percentile(values, 0.95):.2f}s"
    return f"{max(values):.2f}s"


@dataclass
class Column:
    """One measurement: which code, how many runs, its phases (one worker, two workers)."""

    label: str
    runs: int
    phases: list[Phase]
    facts: dict[str, float]


def column_to_json(column: Column) -> str:
    return json.dumps(dataclasses.asdict(column))


def column_from_json(text: str) -> Column:
    doc = json.loads(text)
    phases = []
    for p in doc.pop("phases"):
        p["steady"] = {name: Usage(**use) for name, use in p["steady"].items()}
        p["burst"] = {name: Usage(**use) for name, use in p["burst"].items()}
        p["load_steady"], p["load_burst"] = tuple(p["load_steady"]), tuple(p["load_burst"])
        phases.append(Phase(**p))
    return Column(phases=phases, **doc)


def report(args: argparse.Namespace, columns: list[Column], command: str) -> None:
    cells_of = [(c, p) for c in columns for p in c.phases]
    rows: list[tuple[str, list[str]]] = []
    names = ["worker1", "worker2", "daemon", "dev server"]

    def usage_rows(label: str, pick: str) -> None:
        for name in names:
            cells = []
            for _, p in cells_of:
                use = (p.steady if pick == "steady" else p.burst).get(name)
                cells.append(
                    "-" if use is None else f"{use.cpu_mean:5.0f}% ({use.cpu_peak:.0f}%) {use.rss_peak:6.0f} MiB"
                )
            if any(c != "-" for c in cells):
                rows.append((f"{label} {name}", cells))

    for fact in dict.fromkeys(f for c in columns for f in c.facts):
        rows.append((fact, [f"{c.facts[fact]:.1f}s" if fact in c.facts else "-" for c, _ in cells_of]))
    usage_rows("steady", "steady")
    rows.append(("load average (1, 5, 15 min), steady", [_load(p.load_steady) for _, p in cells_of]))
    usage_rows("burst", "burst")
    rows.append(("load average (1, 5, 15 min), burst", [_load(p.load_burst) for _, p in cells_of]))
    for what, key in (("failure -> advice recorded", "advice"), ("failure -> successor running", "successor")):
        for fn in ("median", "p95", "max"):
            rows.append((f"{what} {fn}", [_fmt(getattr(p, key), fn) for _, p in cells_of]))
    rows.append(("runs without advice", [str(p.missing) for _, p in cells_of]))
    rows.append(("watches lost to heartbeat timeout, retried", [str(p.lost_watches) for _, p in cells_of]))
    if any(p.handed_on for _, p in cells_of):
        rows.append(
            (
                "second worker joined: watches handed on / last after",
                [f"{p.handed_on} / {p.sharing_seconds:.0f}s" if p.workers > 1 else "-" for _, p in cells_of],
            )
        )
    rows.append(
        (
            "burst: workers' garbage collections >= 0.5 s, count / longest",
            [f"{len(p.long_collections)} / {max(p.long_collections, default=0.0):.2f}s" for _, p in cells_of],
        )
    )
    rows.append(("burst: down -> all successors running", [f"{p.burst_seconds:.1f}s" for _, p in cells_of]))
    for what in sorted({what for _, p in cells_of for what in p.tasks}):
        rows.append((f"burst's {what}", [str(p.tasks.get(what, 0)) for _, p in cells_of]))
    steps = list(dict.fromkeys(step for _, p in cells_of for step in p.stages))
    if steps:
        rows.append(("where failure -> advice goes (median / p95):", ["" for _ in cells_of]))
    for step in steps:
        cells = []
        for _, p in cells_of:
            values = p.stages.get(step, [])
            cells.append(f"{_fmt(values, 'median')} / {_fmt(values, 'p95')}" if values else "-")
        rows.append((f"  {step}", cells))

    print()
    workers = "two workers from the start" if args.two_from_start else "one then two workers"
    print(f"concurrent runs (1-node jobs, idle), {args.burst} fail at once (node-down), with {workers};")
    print("embedded dev server + local scheduler, 2 cores; CPU = mean % of one core (peak 1 s), peak RSS")
    headers = [(c.label, f"{c.runs} runs, {p.workers} worker{'s' if p.workers > 1 else ''}") for c, p in cells_of]
    width = max(len(label) for label, _ in rows)
    cell = max(28, *(len(h) for pair in headers for h in pair))
    for line in range(2):
        print(f"{'':{width}}  " + "  ".join(f"{h[line]:>{cell}}" for h in headers))
    for label, cells in rows:
        print(f"{label:{width}}  " + "  ".join(f"{c:>{cell}}" for c in cells))
    print(f"\ncommand: {command}")


def _load(load: tuple[float, float, float]) -> str:
    return " ".join(f"{x:.1f}" for x in load)


@contextlib.contextmanager
def worktree(rev: str | None) -> Iterator[Path | None]:
    """A git worktree of `rev` (detached, under /tmp), removed afterwards; None without a rev."""
    if rev is None:
        yield None
        return
    path = Path(tempfile.mkdtemp(prefix="rb-base-", dir="/tmp"))
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(path), rev], check=True)
    try:
        yield path
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(path)], check=False)


def knows_cached_runs(code: Path) -> bool:
    """Whether `code`'s worker config has `cached_runs`: a tree from before it rejects the key,
    one after it is measured with the same cap as this tree."""
    config = code / "client" / "config.py"
    return config.is_file() and "cached_runs:" in config.read_text()


def measure_in_child(args: argparse.Namespace, label: str, code: Path, runs: int) -> Column:
    """One measurement in its own process, on `code` (its `recovery` first on every path)."""
    with tempfile.NamedTemporaryFile(prefix="rb-col-", suffix=".json", dir="/tmp") as out:
        argv = [sys.executable, str(Path(__file__).resolve()), "--runs", str(runs), "--burst", str(args.burst)]
        argv += ["--window", str(args.window), "--progress-every", str(args.progress_every)]
        argv += ["--burst-timeout", str(args.burst_timeout), "--child-out", out.name, "--label", label]
        argv += ["--min-running", str(args.min_running)]
        argv += ["--two-from-start"] if args.two_from_start else []
        argv += ["--cached-runs", str(args.cached_runs)] if args.cached_runs and knows_cached_runs(code) else []
        argv += ["--keep-home"] if args.keep_home else []
        env = dict(os.environ, RECOVERY_BENCH_CODE=str(code))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(code), env.get("PYTHONPATH")) if p)
        print(f"== {label}: {runs} runs ({code})", flush=True)
        proc = subprocess.Popen(argv, env=env)
        try:
            returncode = proc.wait()
        except KeyboardInterrupt:
            # Let it stop what it started (subprocess.run would SIGKILL it and orphan them all).
            proc.send_signal(signal.SIGINT)
            proc.wait()
            raise
        if returncode != 0:
            raise RuntimeError(f"the measurement of {label} at {runs} runs failed (exit {returncode})")
        return column_from_json(Path(out.name).read_text())


def child(args: argparse.Namespace) -> int:
    """One measurement in this process; its column as JSON to --child-out."""
    home = setup_env()
    os.environ["RECOVERY_TASK_QUEUE"] = f"recovery-bench-{secrets.token_hex(3)}"

    import logging

    from recovery.worker import logs

    logs.configure(logging.WARNING)
    rig = Rig(home)
    code = 1
    try:
        phases, facts = asyncio.run(measure(args, rig))
        column = Column(args.label, args.runs, phases, facts)
        Path(args.child_out).write_text(column_to_json(column))
        report(args, [column], f"(one measurement of {args.label})")
        code = 0
    except KeyboardInterrupt:
        print("interrupted; cleaning up", file=sys.stderr)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the clean-up short
        wind_down(rig, keep_home=args.keep_home or code != 0)
    return code


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, nargs="+", default=[1000], help="one measurement per size")
    parser.add_argument("--burst", type=int, default=100)
    parser.add_argument("--window", type=float, default=30.0, help="steady-state sampling, seconds")
    parser.add_argument("--progress-every", type=float, default=20.0, help="seconds between progress lines")
    parser.add_argument("--burst-timeout", type=float, default=300.0)
    parser.add_argument("--baseline", metavar="REV", help="also measure REV (a git worktree of it), side by side")
    parser.add_argument("--baseline-runs", type=int, nargs="+", help="sizes for the baseline (default: --runs)")
    parser.add_argument("--keep-home", action="store_true", help="keep RECOVERY_HOME (logs) afterwards")
    parser.add_argument(
        "--min-running",
        type=float,
        default=1.0,
        help="go on once this share of the jobs runs and no more started for 60 s (10,000 runs: 0.99)",
    )
    parser.add_argument(
        "--two-from-start",
        action="store_true",
        help="run two workers from before the first run starts (one burst, shared), not one then a second",
    )
    parser.add_argument(
        "--cached-runs",
        type=int,
        help="the workers keep this many runs' workflows in memory (config cached_runs; a baseline too, if its config has it)",
    )
    parser.add_argument("--child-out", help=argparse.SUPPRESS)
    parser.add_argument("--label", default="this tree", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if min(args.runs + (args.baseline_runs or [])) < 2 * args.burst:
        parser.error("--runs must be at least twice --burst (two bursts hit different runs)")
    if args.child_out:
        args.runs = args.runs[0]  # one size per child: measure() reads an int
        leave(child(args))
    python = os.path.relpath(sys.executable, ROOT) if sys.executable.startswith(str(ROOT)) else sys.executable
    command = " ".join([python, "benchmarks/concurrent_runs.py", *sys.argv[1:]])
    columns: list[Column] = []
    code = 1
    try:
        with worktree(args.baseline) as base:
            plan: list[tuple[str, Path, int]] = [("this tree", ROOT, n) for n in args.runs]
            plan += [(f"{args.baseline} (baseline)", base, n) for n in (args.baseline_runs or args.runs) if base]
            failed = []
            for label, tree, runs in plan:
                try:
                    columns.append(measure_in_child(args, label, tree, runs))
                except RuntimeError as err:  # the others still run: a side-by-side with a gap
                    print(f"concurrent_runs: {err}", file=sys.stderr)
                    failed.append(err)
        code = 1 if failed else 0
    except subprocess.CalledProcessError as err:
        print(f"concurrent_runs: {err}", file=sys.stderr)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
    if columns:
        report(args, columns, command)
    leave(code)


if __name__ == "__main__":
    main()
