"""The GPU health probe, in the parts that run in different places.

- `node_probe`  on the node: NVML's readings (standard library and `pynvml` only)
- `readings`    what it reads, `GpuReading` and `GpuHealth` (standard library dataclasses)
- `__main__`    its command line, `python -m recovery.activities.gpu`, run as a scheduler step
- `remote`      from the worker: run the probe on a node, read its JSON line back
- `evidence`    what the readings mean for attribution
"""
