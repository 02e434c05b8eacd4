"""`python -m recovery.activities.gpu [--node NAME]`: the GPU probe as a scheduler step.

Prints this machine's `GpuHealth` as one line of JSON and exits 0, so it runs on a node as a
step (`remote.probe_node` runs it there). Standard library and `pynvml` only, like the probe.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from recovery.activities.gpu.node_probe import probe_gpus


def main(argv: Sequence[str] | None = None) -> int:
    """Print this machine's GpuHealth as one JSON line. Exit 0 whatever NVML said: the JSON says it."""
    parser = argparse.ArgumentParser(
        prog="python -m recovery.activities.gpu", description="Print this machine's GPU health."
    )
    parser.add_argument("--node", help="the node name to report (default: this host's name)")
    args = parser.parse_args(argv)
    # stdout carries the JSON line and nothing else: the caller parses it; notes go to stderr.
    logging.basicConfig(stream=sys.stderr, format="%(name)s: %(message)s")
    print(probe_gpus(node=args.node).to_json(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
