"""The retry policies of the workflows' activities, in one place.

- FOREVER: the world will come back (a scheduler or service that is away); keep trying.
- BOUNDED: an action that may be refused for good; give up after a few minutes of tries.
- ONCE: advisory calls whose answer is worth less than the time a retry would cost.
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
