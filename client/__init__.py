"""The client side: what talks to Temporal (and to the local cluster) on a user's behalf.

Connecting (`temporal_client`, `connection`, `config`), starting and reading runs (`submit`,
`runs`, `render`, `nodes`) and the command groups built on them (`cli_*`). Kept apart from the
worker process, as the Temporal SDK keeps `client` and `worker` apart: this package never
imports `recovery.worker`; the worker uses it (to connect, and to start the runs discovery
adopts).
"""
