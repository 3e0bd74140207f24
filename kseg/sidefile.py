"""Side files (checkpoints, ``partition.metadata``, ``leader-epoch-checkpoint``) are read whole, up to a cap.

Kafka writes these files a line per partition or epoch: kilobytes, a few
megabytes on the largest broker.  A damaged or forged one can be any size --
a 64 MiB sparse checkpoint cost 1.9 GB to parse, a 4 GiB one 16.8 GB -- so
nothing reads more than :data:`MAX_SIDE_FILE_BYTES` of one: a larger file is
refused with one error, its path and the cap (docs/cli.md §10).  ``dump``
reports the same file as a problem and goes on (kseg.ops.dump.sidefiles).
"""

from __future__ import annotations

import os

from kseg.errors import LimitExceeded
from kseg.segment import MappedFile

#: A checkpoint line is ~40 bytes: room for 400,000 partitions.
MAX_SIDE_FILE_BYTES = 16 << 20


class SideFileTooLarge(LimitExceeded):
    """A side file larger than :data:`MAX_SIDE_FILE_BYTES`: not read."""


def read_side_file(path: str | os.PathLike[str], limit: int = MAX_SIDE_FILE_BYTES) -> bytes:
    """The bytes of a side file, or :class:`SideFileTooLarge` when it holds more than ``limit``."""
    with MappedFile(path) as mapped:
        if mapped.size > limit:
            raise SideFileTooLarge(
                f"{mapped.size} bytes: far larger than any {os.path.basename(path)} Kafka writes (kseg reads at "
                f"most {limit} bytes of a side file); not read", offset=limit, path=os.fspath(path))
        return bytes(mapped.buf)
