"""The walk over the files of ``kseg dump``: one handler per kind of file, then the summaries.

Each handler lives in its own module (the .log walk, the index checks, producer
and transaction state, the side files); this one only dispatches, as
``DumpLogSegments.main`` does on the suffix, and turns an unreadable file into
a problem so the dump goes on with the next.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from kseg.ops.dump.events import Event, FileStart, Ignored, Problem
from kseg.ops.dump.indexes import dump_index, dump_time_index
from kseg.ops.dump.log import dump_log
from kseg.ops.dump.options import DumpOptions
from kseg.ops.dump.producers import dump_producer_snapshot, dump_txn_index
from kseg.ops.dump.sidefiles import dump_side_file
from kseg.ops.dump.summaries import Summaries
from kseg.ops.dump.targets import SIDE_FILE_NAMES, DumpTarget, handler_kind


def iter_dump(targets: Iterable[DumpTarget], options: DumpOptions) -> Iterator[Event]:
    """Every event of dumping ``targets`` in order, then the summary sections."""
    summaries = Summaries(java=options.dialect.java_port)
    handlers: dict[str, Callable[[DumpTarget], Iterator[Event]]] = {
        "log": lambda t: dump_log(t, options, summaries),
        "index": lambda t: dump_index(t, options, summaries),
        "timeindex": lambda t: dump_time_index(t, options, summaries),
        "snapshot": dump_producer_snapshot,
        "txnindex": lambda t: dump_txn_index(t, options),
    }
    for target in targets:
        kind = handler_kind(target.path.name)
        yield FileStart(target.display, kind)
        if kind is None:
            yield Ignored(target.display)
            continue
        try:
            if kind in SIDE_FILE_NAMES:
                yield from dump_side_file(target, kind)
                continue
            yield from handlers[kind](target)
        except OSError as err:  # unreadable, vanished, a directory named like a segment
            yield Problem(target.display, None, f"cannot read: {err.strerror or err}")
    yield from summaries.events()
