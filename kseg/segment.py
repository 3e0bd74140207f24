"""Segment files on disk: a read-only mmap reader and an atomic writer.

Reading never changes evidence: files are opened ``O_RDONLY`` and mapped with
``ACCESS_READ``; nothing is created, locked or touched.  An empty file (a new
active segment) cannot be mapped and reads as no batches.

Writing never touches an input: :func:`atomic_write` writes a temporary file
in the destination directory, fsyncs it, renames it over the destination and
fsyncs the directory, so a crash leaves either no file or a whole one.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import stat
import sys
import weakref
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from kseg import mapguard
from kseg.errors import KsegError, Truncated
from kseg.format import Batch, BatchWalk, read_batch
from kseg.index import (
    IndexSlots,
    OffsetEntry,
    TimeEntry,
    lookup_offset,
    lookup_timestamp,
    offset_slots,
    read_offset_index,
    read_time_index,
    time_slots,
)

#: Drop mapped pages behind a walk every this many bytes, so memory stays flat on any file size.
RELEASE_EVERY = 16 * 1024 * 1024

#: ``madvise(MADV_POPULATE_READ)`` (Linux >= 5.14; ``mmap`` names it only from Python 3.13, the value is
#: Linux's): maps a window of pages in one call, about 30 % cheaper than taking the page faults one by
#: one (docs/core.md).  None elsewhere: another system's 22 means something else.
MADV_POPULATE_READ: int | None = getattr(mmap, "MADV_POPULATE_READ", 22) if sys.platform == "linux" else None

#: Told how many bytes each :func:`release_pages` call passed: the one place every long walk reaches,
#: so the CLI edge can draw progress without a callback through every layer.  None: nobody listens.
read_observer: Callable[[int], None] | None = None


class NotARegularFile(KsegError):
    """A FIFO, device, socket or directory where a file was expected (a FIFO blocks, a device never ends)."""


def check_regular(path: str | os.PathLike[str], mode: int) -> None:
    """Raise :class:`NotARegularFile` unless ``mode`` (from a stat of ``path``) is a regular file's."""
    if not stat.S_ISREG(mode):
        raise NotARegularFile("not a regular file", path=os.fspath(path))


def base_offset_from_name(path: str | os.PathLike[str]) -> int | None:
    """The number before the first ``.`` of a segment's name (``LogFileUtils.offsetFromFileName``).

    KRaft snapshots are named ``<offset>-<epoch>.checkpoint``: their offset is
    the part before the dash.  None when the name holds no number.
    """
    stem = Path(path).name.split(".", 1)[0]
    if "-" in stem:
        stem = stem.split("-", 1)[0]
    return int(stem) if stem.isdigit() else None


def sibling(path: str | os.PathLike[str], suffix: str) -> Path:
    """``<base><suffix>`` beside ``<base>.log`` (``suffix`` with its dot: ``".index"``)."""
    path = Path(path)
    if not suffix.startswith("."):
        suffix = "." + suffix
    return path.with_name(path.name.split(".", 1)[0] + suffix)


def open_new_private(path: str | os.PathLike[str], mode: int = 0o600) -> int:
    """A descriptor, for writing, on a file created by this call: ``O_EXCL | O_NOFOLLOW``, never a symlink's target.

    For the few files kseg writes outside an output directory (Spark's log and
    log4j configuration, Kafka's ``.lock``): a name someone else created
    first, even a dangling symlink, is an error, never followed.
    """
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)


def open_existing_for_lock(path: str | os.PathLike[str]) -> int:
    """A read-write descriptor on an existing regular file, not through a symlink (for an ``fcntl`` lock)."""
    return _regular_or_closed(path, os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC))


def open_read_only(path: str | os.PathLike[str], directory: bool = False) -> int:
    """A read-only descriptor on a regular file that leaves its access time alone where the kernel allows.

    ``O_NOATIME`` is refused (EPERM) for files the caller does not own; the
    plain open that follows still changes nothing but, on some mounts, atime.
    ``O_NONBLOCK`` makes opening a FIFO return at once, so that it is refused
    (:class:`NotARegularFile`) instead of waiting for a writer forever.
    ``directory``: a directory to list (kseg.listing), opened ``O_DIRECTORY`` instead.
    """
    flags = os.O_RDONLY | (os.O_DIRECTORY | os.O_CLOEXEC if directory else os.O_NONBLOCK)
    try:
        fd = os.open(path, flags | getattr(os, "O_NOATIME", 0))
    except PermissionError:
        fd = os.open(path, flags)
    return fd if directory else _regular_or_closed(path, fd)


def _regular_or_closed(path: str | os.PathLike[str], fd: int) -> int:
    """``fd`` if it is a regular file; otherwise it is closed and :class:`NotARegularFile` raised."""
    try:
        check_regular(path, os.fstat(fd).st_mode)
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def naming(path: str | os.PathLike[str]) -> Iterator[None]:
    """An ``OSError`` raised in the block without a file name gets ``path``.

    A failed ``write``, ``fsync`` or ``mmap`` (``No space left on device``,
    ``Cannot allocate memory``, ``No such device``) carries no name of its
    own, and the one error line must say which file it was about.
    """
    try:
        yield
    except OSError as err:
        if err.filename is None:
            err.filename = str(path)
        raise


class MappedFile:
    """A whole file mapped read-only (``b""`` when it is empty): the one way kseg reads its inputs.

    Opening never creates, locks or changes anything, not even the access
    time (:func:`open_read_only`).  :meth:`release` drops the pages a walk has
    passed, so the resident set does not grow with the file.  A sequential
    walk may instead :meth:`read_into` a buffer of its own (``readable=True``
    keeps the descriptor open for it): a copy costs less than the page-table
    work of mapping the pages (docs/core.md, "Figures").
    """

    def __init__(self, path: str | os.PathLike[str], readable: bool = False) -> None:
        self.path = Path(path)
        mapguard.install()  # a file cut short under the mapping: the one error line, not SIGBUS
        fd = open_read_only(self.path)
        try:
            self.size = os.fstat(fd).st_size
            with naming(self.path):
                self._map: mmap.mmap | None = (
                    mmap.mmap(fd, 0, access=mmap.ACCESS_READ) if self.size > 0 else None
                )
        except BaseException:
            os.close(fd)
            raise
        # The descriptor stays open as long as the mapping: its fstat tells whether *this* file (not whatever
        # now has its name) shrank under the walk (check_size); ``readable`` lets read_into copy through it.
        self._fd: int | None = fd
        self._readable = readable
        self._released = 0
        # dropped without close(): the descriptor is still checked, and a shrink still ends the run (kseg.mapguard)
        self._dropped = weakref.finalize(self, mapguard.check_dropped, fd, str(self.path), self.size)

    @property
    def buf(self) -> bytes | mmap.mmap:
        return self._map if self._map is not None else b""

    def release(self, upto: int, populate: bool = True) -> None:
        """Let the kernel take back the mapped pages before ``upto`` (once 16 MiB have been passed).

        ``populate=False``: for a walk that reads the file with :meth:`read_into` and touches the
        mapping only here and there, the pages ahead are not mapped in advance.
        """
        if upto - self._released >= RELEASE_EVERY:
            self._released = release_pages(self.buf, self._released, upto, populate)

    def read_into(self, view: memoryview, position: int) -> int:
        """Copy the file's bytes from ``position`` into ``view`` (``pread``); returns how many were read.

        Reads as far as ``view`` holds or the size the file had when opened, whichever is less;
        nothing unless the file was opened ``readable``.
        """
        want = min(len(view), self.size - position)
        if self._fd is None or not self._readable or want <= 0:
            return 0
        done = 0
        while done < want:  # a regular file returns short counts only at its end (or if cut short under us)
            got = os.preadv(self._fd, [view[done:want]], position + done)
            if got <= 0:
                self.check_size()  # the end came before the size mapped: the file shrank under the walk
                break
            done += got
        return done

    def check_size(self) -> None:
        """Raise :class:`~kseg.mapguard.FileShrank` if the file is now shorter than when it was mapped.

        A walk calls it where it stops (zeros, a bad batch, the end) before it reports the stop: a cut
        inside a page faults nothing -- the rest of that page reads as zeros -- so the zeros a walk stops
        at may be the cut, not the file.  ``fstat`` on the descriptor held since the mapping was made: a
        file renamed over the name (an in-place rewrite) is another file and changes nothing here.
        """
        if self._fd is not None:
            mapguard.check_size(self._fd, self.path, self.size)

    def close(self) -> None:
        """Unmap, then check the file still has the size mapped (what was read of it was the file), then close."""
        if self._map is not None:
            with contextlib.suppress(BufferError):  # a caller still holds a view; GC unmaps later
                self._map.close()
            self._map = None
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        self._dropped.detach()
        try:
            mapguard.check_size(fd, self.path, self.size)  # read zeros past a cut: an error
        finally:
            os.close(fd)

    def __enter__(self) -> MappedFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def map_window(fd: int, offset: int, length: int) -> mmap.mmap:
    """A read-only shared mapping of ``length`` bytes at ``offset`` (a multiple of the allocation
    granularity) of ``fd`` -- a descriptor :func:`open_read_only` gave -- its pages entered in one
    call (``MAP_POPULATE``): a window a walk searches without copying (kseg grep, docs/grep.md).
    ``ValueError`` when the file is now shorter than the window."""
    flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
    return mmap.mmap(fd, length, flags=flags, prot=mmap.PROT_READ, offset=offset)


def read_small_file(path: str | os.PathLike[str]) -> bytes:
    """A small side file's bytes (a checkpoint, a snapshot), read through the same read-only mapping."""
    with MappedFile(path) as mapped:
        return bytes(mapped.buf)


def release_pages(buf: object, start: int, upto: int, populate: bool = True) -> int:
    """Tell the kernel we are done with mapped pages ``[start, upto)``; returns the new release mark.

    The file stays in the page cache; only this process's mapping drops the
    pages, so a long walk does not grow the resident set.  The next
    ``RELEASE_EVERY`` bytes, where the walk goes now, are mapped in one call
    (:func:`populate_ahead`), so the resident set stays under two windows.
    """
    if read_observer is not None and upto > start:
        read_observer(upto - start)
    if not isinstance(buf, mmap.mmap) or not hasattr(mmap, "MADV_DONTNEED"):
        return upto
    page_end = upto - upto % mmap.PAGESIZE
    if page_end > start:
        buf.madvise(mmap.MADV_DONTNEED, start, page_end - start)
        if populate:
            populate_ahead(buf, page_end)
    return page_end


def populate_ahead(buf: mmap.mmap, start: int) -> None:
    """Map the pages of ``[start, start + RELEASE_EVERY)`` now rather than fault them in one by one.

    Read-only advice: the pages come from the page cache (or are read as a
    fault would read them); nothing is written and the access time is not
    touched beyond what reading does (the file is open ``O_NOATIME``).  A
    kernel without ``MADV_POPULATE_READ`` (EINVAL) or a file cut short under
    the mapping (EFAULT) leaves the walk to take its page faults as before.
    """
    length = min(RELEASE_EVERY, len(buf) - start)
    if MADV_POPULATE_READ is None or length <= 0:
        return
    with contextlib.suppress(OSError):
        buf.madvise(MADV_POPULATE_READ, start, length)


class Segment:
    """A .log (or KRaft .checkpoint) file: batches in file order, lazily.

    ``walk()`` follows Kafka's reader (§4.1 of the reference) and records where
    and why it stopped; errors raised while reading carry this file's path.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._file = MappedFile(self.path)
        self.base_offset = base_offset_from_name(self.path)
        self._offset_index: tuple[OffsetEntry, ...] | None = None
        self._time_index: tuple[TimeEntry, ...] | None = None
        self._side_maps: dict[str, tuple[MappedFile | None, Sequence]] = {}

    @property
    def buf(self) -> bytes | mmap.mmap:
        return self._file.buf

    @property
    def size(self) -> int:
        return self._file.size

    def close(self) -> None:
        side = [mapped for mapped, _ in self._side_maps.values() if mapped is not None]
        self._side_maps.clear()
        try:
            self._file.close()
        finally:
            for mapped in side:
                mapped.close()

    def __enter__(self) -> Segment:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def release(self, upto: int) -> None:
        """Drop the mapped pages before ``upto`` (once 16 MiB have been passed): a walk calls it as it goes,
        so the resident set stays flat whatever the file's size (:meth:`MappedFile.release`).

        Pages dropped are read again from the page cache if a batch behind ``upto`` is used later:
        releasing never changes what a walk reads, only what stays mapped.
        """
        self._file.release(upto)

    # -- batches -------------------------------------------------------------------
    def walk(self, start: int = 0, end: int | None = None, *, strict: bool = False) -> BatchWalk:
        """A walk over the batches; ``walk.end`` tells where and why it stopped."""
        return BatchWalk(self.buf, start, end, strict=strict)

    def iter_batches(self, start: int = 0, end: int | None = None) -> Iterator[Batch]:
        """Batches in file order, as Kafka's reader yields them.

        Stops quietly at a short or partial tail; raises :class:`~kseg.errors.Corrupt`
        at a size field below 14, as ``FileLogInputStream`` throws there.
        """
        try:
            yield from self.walk(start, end, strict=True)
        except KsegError as err:
            self.check_size()  # a size field below 14 may be the zeros past a cut inside a page
            raise err.with_path(str(self.path))
        self.check_size()  # so may a quiet stop

    def check_size(self) -> None:
        """Raise :class:`~kseg.mapguard.FileShrank` if the file shrank under the walk (:meth:`MappedFile.check_size`)."""
        self._file.check_size()

    def batch_at(self, position: int) -> Batch:
        try:
            batch = read_batch(self.buf, position)
        except KsegError as err:
            raise err.with_path(str(self.path))
        if position + batch.size > self.size:
            raise Truncated(
                f"batch of {batch.size} bytes runs past the end of the file ({self.size - position} bytes left)",
                offset=position,
                field="batch",
                path=str(self.path),
            )
        return batch

    # -- seeking through the side indexes ---------------------------------------
    def _sibling(self, suffix: str) -> Path:
        return sibling(self.path, suffix)

    def offset_index(self) -> tuple[OffsetEntry, ...]:
        """Live entries of the sibling .index (empty when there is none)."""
        if self._offset_index is None:
            self._offset_index = _read_index(self._sibling(".index"), read_offset_index, self.base_offset or 0)
        return self._offset_index

    def time_index(self) -> tuple[TimeEntry, ...]:
        """Live entries of the sibling .timeindex (empty when there is none)."""
        if self._time_index is None:
            self._time_index = _read_index(self._sibling(".timeindex"), read_time_index, self.base_offset or 0)
        return self._time_index

    def _slots(self, suffix: str, make) -> Sequence:
        """Lazy live entries of a sibling index, mapped for the life of this segment."""
        if suffix not in self._side_maps:
            path = self._sibling(suffix)
            mapped = MappedFile(path) if path.is_file() else None
            self._side_maps[suffix] = (mapped, make(mapped.buf if mapped else b"", self.base_offset or 0))
        return self._side_maps[suffix][1]

    def position_of_offset(self, offset: int) -> int | None:
        """Position of the first batch whose last offset is >= ``offset`` (``translateOffset``).

        Starts from the .index entry at or below the offset (binary search over
        the mapped file), then scans batch headers forward; None when no batch
        in the file reaches the offset.  An index entry that does not point at a
        valid batch at or below the offset (a stale or damaged index) is not
        trusted: the scan then starts at the beginning of the file.
        """
        entry = lookup_offset(self._slots(".index", offset_slots), offset, self.base_offset or 0)
        start = entry.position if 0 <= entry.position < self.size else 0
        if start and not self._trustworthy(start, entry.offset):
            start = 0
        for batch in self.iter_batches(start):
            if batch.last_offset >= offset:
                return batch.position
        return None

    def _trustworthy(self, position: int, indexed_offset: int) -> bool:
        try:
            batch = read_batch(self.buf, position)
        except KsegError:
            return False
        return batch.is_valid() and batch.base_offset <= indexed_offset

    def position_of_timestamp(self, timestamp: int) -> int | None:
        """Position of the first batch whose max timestamp is >= ``timestamp`` (``findOffsetByTimestamp``)."""
        entry = lookup_timestamp(self._slots(".timeindex", time_slots), timestamp, self.base_offset or 0)
        start = self.position_of_offset(entry.offset)
        if start is None:
            return None
        for batch in self.iter_batches(start):
            if batch.max_timestamp >= timestamp:
                return batch.position
        return None


def _read_index(path: Path, reader, base_offset: int) -> tuple:
    if not path.exists():
        return ()
    with MappedFile(path) as mapped:
        slots: IndexSlots = reader(mapped.buf, base_offset)
    return slots.live_entries


def open_segment(path: str | os.PathLike[str]) -> Segment:
    """Open a .log/.checkpoint read-only; use as a context manager."""
    return Segment(path)
