"""Whole excerpts of real logs cut off inside a chained Python traceback: CPython prints the
exception another was raised from first, then "The above exception was the direct cause of the
following exception:", then the traceback of the one raised from it. When the log ends before
that last traceback's exception line, the exception it was raised from says what failed;
"During handling of the above exception" says no such thing."""

from __future__ import annotations

from tests.unit.real_lines import diagnose

# wenet-e2e/wespeaker issue 171: a second job on the node finished and took the shared c10d
# store down; torchelastic's store call fails with a broken pipe, and the RendezvousConnectionError
# torchrun raised from it is cut off after its first frames.
WESPEAKER = (
    "WARNING:torch.distributed.elastic.rendezvous.dynamic_rendezvous:The node 'node04.localdomain_3882442_0'"
    " has failed to shutdown the rendezvous '9987b766-350c-48bf-aa45-cfc2da182f33' due to an error of type"
    " RendezvousConnectionError.\n"
    "Traceback (most recent call last):\n"
    '  File "/home/user/miniconda3/envs/wespeaker/lib/python3.9/site-packages/torch/distributed/elastic/'
    'rendezvous/c10d_rendezvous_backend.py", line 113, in _call_store\n'
    "    return getattr(self._store, store_op)(*args, **kwargs)\n"
    "RuntimeError: Broken pipe\n"
    "\n"
    "The above exception was the direct cause of the following exception:\n"
    "\n"
    "Traceback (most recent call last):\n"
    '  File "/home/user/miniconda3/envs/wespeaker/bin/torchrun", line 33, in <module>\n'
    "    sys.exit(load_entry_point('torch==1.12.1', 'console_scripts', 'torchrun')())\n"
    '  File "/home/user/miniconda3/envs/wespeaker/lib/python3.9/site-packages/torch/distributed/elastic/'
    'multiprocessing/errors/__init__.py", line 345, in wrapper\n'
    "    return f(*args, **kwargs)"
)


def test_cut_traceback_takes_the_reading_of_the_exception_it_was_raised_from() -> None:
    found = diagnose(WESPEAKER)
    assert found.symptom == "crash"
    assert (found.evidence[0].signature, found.category, found.retryable) == (
        "torch-store-socket-reset",
        "network",
        True,
    )


def test_an_exception_during_handling_is_not_raised_from_the_one_above() -> None:
    # The same lines with CPython's other chain marker: the second exception happened while the
    # first was handled, so the cut traceback's class stays unknown.
    during = WESPEAKER.replace(
        "The above exception was the direct cause of the following exception:",
        "During handling of the above exception, another exception occurred:",
    )
    found = diagnose(during)
    assert (found.evidence[0].signature, found.category) == ("uncaught-exception", "unknown")
