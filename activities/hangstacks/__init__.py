"""Evidence from a hung job's ranks, taken while they are still alive, and whose fault the hang is.

A hang that no log line explains still has a culprit: in synchronous training every healthy rank
ends up waiting in a collective (an all-reduce, a barrier) for the one that never arrives. So,
before a hung attempt is terminated:

- `node` runs on each node of the job (`python -m recovery.activities.hangstacks.node`, an `srun
  --overlap` step into the running job on Slurm; a plain process for the local scheduler, whose
  nodes are all this machine). It finds the job's Python ranks there, dumps their stacks with
  `py-spy` (twice, a moment apart, so a rank that is merely busy is not mistaken for a stuck one)
  and reads PyTorch's flight recorder dumps where the job enabled them; it prints one JSON line.
- `judge` is pure: the rank that is not waiting in a collective while the others are, or whose
  collective sequence number lags the others', is the culprit, and its node is implicated.
- `collect` is the worker's side: it runs `node` on every node, bounded by a timeout, turns every
  failure into evidence that says so (never an activity failure), and judges.
"""
