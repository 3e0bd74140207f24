"""Where one ``kseg`` run's CPU goes with ``--jobs``: the serial part and the pool's part (Amdahl).

Runs ``kseg ARGS...`` in this process, with :class:`concurrent.futures.ProcessPoolExecutor`
wrapped so that the main process's CPU time is read when each pool starts and when it is shut
down.  Prints one JSON line on stderr (stdout is kseg's, normally sent to /dev/null):

* ``before``: the main process's CPU (user + system) before the first pool started -- planning,
  listing, imports: serial;
* ``during``: the main process's CPU while pools ran -- submitting tasks, receiving results
  (it overlaps the workers' work, but it is one more process competing for the cores);
* ``after``: the main process's CPU after the last pool ended -- the merge and the rendering: serial;
* ``workers``: the CPU of the worker processes (reaped children), the part that spreads;
* ``wall``: seconds;
* ``pools``: how many pools started.

On an idle machine of ``N`` cores the wall time is about ``before + after + max(during,
workers / N)``; with another load the CPU figures still hold.  ``--jobs 1`` (no pool) puts
everything in ``before``.

Usage: python bench/cpu_split.py verify --jobs 2 LOGDIR > /dev/null
"""

from __future__ import annotations

import concurrent.futures
import concurrent.futures.process
import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parent.parent))  # after PYTHONPATH: --baseline runs another tree


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


class _Clock:
    """The main process's CPU at the first pool's start and at the last pool's end."""

    def __init__(self) -> None:
        self.first_start: float | None = None
        self.last_end: float | None = None
        self.pools = 0


CLOCK = _Clock()
_Original = concurrent.futures.process.ProcessPoolExecutor


class _TimedPool(_Original):  # type: ignore[misc,valid-type]
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        CLOCK.pools += 1
        if CLOCK.first_start is None:
            CLOCK.first_start = _cpu(resource.RUSAGE_SELF)
        super().__init__(*args, **kwargs)

    def shutdown(self, *args: Any, **kwargs: Any) -> None:
        super().shutdown(*args, **kwargs)
        CLOCK.last_end = _cpu(resource.RUSAGE_SELF)


def main() -> int:
    concurrent.futures.ProcessPoolExecutor = _TimedPool  # type: ignore[misc]
    concurrent.futures.process.ProcessPoolExecutor = _TimedPool  # type: ignore[misc]
    from kseg.cli import cli

    start = time.perf_counter()
    code = cli.main(sys.argv[1:], standalone_mode=False)
    wall = time.perf_counter() - start
    sys.stdout.flush()
    total = _cpu(resource.RUSAGE_SELF)
    first = CLOCK.first_start if CLOCK.first_start is not None else total
    last = CLOCK.last_end if CLOCK.last_end is not None else total
    split = {"before": round(first, 3), "during": round(last - first, 3), "after": round(total - last, 3),
             "workers": round(_cpu(resource.RUSAGE_CHILDREN), 3), "wall": round(wall, 3), "pools": CLOCK.pools,
             "exit": code}
    print(json.dumps(split), file=sys.stderr)
    return 0


if __name__ == "__main__":
    os._exit(main())
