"""The embedded local scheduler: "a tiny Slurm on one machine", for the demo and the tests.

Everything it is lives here, and nothing here imports the worker's or the client's packages:

- `adapter`   `LocalScheduler`, the `Scheduler` interface the activities use, over the socket
- `protocol`  the wire protocol the adapter and the daemon share (one JSON object a line)
- `launcher`  start, stop and inspect the daemon (`recovery cluster ...`); its `serve` entry point
- `daemon`    the daemon process: the socket server around `LocalCluster`
- `cluster`   `LocalCluster`: jobs and nodes, running a batch script once per allocated node
- `changelog` what changed, in order: the memory behind its list-and-watch answers
- `state`     the job table and node states it keeps in `$RECOVERY_HOME/cluster/state.db` (SQLite)
- `procs`     process groups, Slurm's environment variables and host lists
"""

from __future__ import annotations

from recovery.activities.schedulers.local.adapter import LocalScheduler, call_sync

__all__ = ["LocalScheduler", "call_sync"]
