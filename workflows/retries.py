"""The retry policies of the workflows' activities, in one place.

- FOREVER: the world will come back (a scheduler or service that is away); keep trying.
- BOUNDED: an action that may be refused for good; give up after a few minutes of tries.
- ONCE: advisory calls whose answer is worth less than the time a retry would cost.
- TWICE: advisory work that bounds its own time (a hung attempt's stacks): one more try, then
  the run carries on without it.
- NOTIFY: a notification; a receiver that stays away for minutes is not waited for.
- DISCOVERY: a discovery round; like FOREVER, but a cluster that is away is asked once a minute.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio.common import RetryPolicy

FOREVER = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_interval=timedelta(seconds=30))
BOUNDED = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=10,
)
ONCE = RetryPolicy(maximum_attempts=1)
TWICE = RetryPolicy(maximum_attempts=2)
NOTIFY = RetryPolicy(maximum_attempts=5, maximum_interval=timedelta(minutes=1))
DISCOVERY = RetryPolicy(maximum_interval=timedelta(minutes=1))
