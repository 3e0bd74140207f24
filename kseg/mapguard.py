"""A file that shrinks under a mapping ends the run with the one error line, not with ``SIGBUS``.

kseg reads its inputs through ``mmap`` (:class:`kseg.segment.MappedFile`).  When
another process truncates a mapped file -- a live broker's follower
truncation or recovery, another tool -- the next read of a page past the new
end raises ``SIGBUS``, whose default action ends the process at once: no
message, no clean-up, exit 135.  Python cannot catch it: its own handlers run
between bytecodes, after the faulting read would have been retried forever.

So :func:`install` puts a handler below Python's (``sigaction`` through
``ctypes``, no compiled code of kseg's own): for a fault on a vanished page of
a file mapping (``BUS_ADRERR``) it maps a zero-filled page over it and counts
the fault; the read resumes, sees zeros, and the walk ends early.  What it read
is then not the file, so nothing of it may be reported: every ``MappedFile``
asks its descriptor's size again (:func:`check_size`) where a walk stops and
when it is closed, and raises :class:`FileShrank` (its path, the byte where
the file now ends) if the file is shorter than mapped -- which also catches a
cut inside a page, where nothing faults and the rest of the page reads as
zeros.  The CLI ends any run during which a fault was counted, or a mapping
dropped unclosed found its file shrunk, with exit 2 (docs/cli.md §10).

Any other ``SIGBUS`` (a hardware error, a fault the page could not be replaced
for) restores the default action, so the process ends as it would have.  Only
on Linux x86_64 and aarch64, where the layouts of ``siginfo_t`` and glibc's
``struct sigaction`` used here are known; elsewhere :func:`install` does
nothing and a shrinking file still ends the run with ``SIGBUS``.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import platform
import signal
import sys

from kseg.errors import KsegError

#: ``si_code`` of a ``SIGBUS`` for an address no longer backed by the file (``BUS_ADRERR``).
BUS_ADRERR = 2
_SA_SIGINFO = 0x4
_SA_NODEFER = 0x40000000
_PROT_READ = 0x1
_MAP_PRIVATE_FIXED_ANONYMOUS = 0x02 | 0x10 | 0x20
_MAP_FAILED = ctypes.c_void_p(-1).value


class FileShrank(KsegError):
    """A mapped input shrank while kseg read it: what was read past its new end was not the file."""


class _SigInfo(ctypes.Structure):
    """The head of Linux's ``siginfo_t``: number, errno, code, then (for ``SIGBUS``) the faulting address."""

    _fields_ = (("signo", ctypes.c_int), ("errno", ctypes.c_int), ("code", ctypes.c_int),
                ("addr", ctypes.c_void_p))


class _SigAction(ctypes.Structure):
    """glibc's ``struct sigaction`` on x86_64 and aarch64: handler, a 1024-bit mask, flags, restorer."""

    _fields_ = (("handler", ctypes.c_void_p), ("mask", ctypes.c_ulong * (1024 // (8 * ctypes.sizeof(ctypes.c_ulong)))),
                ("flags", ctypes.c_int), ("restorer", ctypes.c_void_p))


_HANDLER_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.POINTER(_SigInfo), ctypes.c_void_p)

_state = {"faults": 0, "installed": False}
_keep: list[object] = []  # the callback and libc must outlive every fault


def supported() -> bool:
    """Whether this system's structures are the ones :func:`install` knows."""
    return sys.platform == "linux" and platform.machine() in {"x86_64", "aarch64"}


def faults() -> int:
    """How many vanished pages this process has read since it started (each replaced by zeros)."""
    return _state["faults"]


def install() -> None:
    """Catch ``SIGBUS`` on vanished pages of mapped files in this process (once; a no-op where unsupported)."""
    if _state["installed"] or not supported():
        return
    libc = ctypes.PyDLL(None)  # PyDLL: the calls keep the GIL, so nothing else runs inside the handler
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long)
    libc.sigaction.argtypes = (ctypes.c_int, ctypes.POINTER(_SigAction), ctypes.POINTER(_SigAction))
    page = mmap.PAGESIZE
    default = _SigAction()  # SIG_DFL: handler 0
    sigbus = int(signal.SIGBUS)

    def on_sigbus(signum: int, info: ctypes._Pointer[_SigInfo], context: int) -> None:
        """Map zeros over the vanished page and count it; anything else: the default action, on the retry."""
        if info.contents.code == BUS_ADRERR and info.contents.addr is not None:
            start = info.contents.addr - info.contents.addr % page
            if libc.mmap(start, page, _PROT_READ, _MAP_PRIVATE_FIXED_ANONYMOUS, -1, 0) not in {None, _MAP_FAILED}:
                _state["faults"] += 1
                return
        libc.sigaction(sigbus, ctypes.byref(default), None)

    handler = _HANDLER_TYPE(on_sigbus)
    action = _SigAction()
    action.handler = ctypes.cast(handler, ctypes.c_void_p).value
    action.flags = _SA_SIGINFO | _SA_NODEFER
    if libc.sigaction(sigbus, ctypes.byref(action), None) != 0:
        return
    _keep.extend((libc, handler, action, default))
    _state["installed"] = True


def check_size(fd: int, path: str | os.PathLike[str], size: int) -> None:
    """Raise :class:`FileShrank` if the file open as ``fd`` (mapped at ``size`` bytes) is now shorter.

    A cut at a page boundary faults (:func:`install`); a cut *inside* a page
    does not: the rest of that page reads as zeros, which a walk takes for
    zeros in the file and stops at.  So wherever a walk over a mapping stops,
    and when the mapping is closed, the file's size is asked again, of the
    descriptor that was mapped (``fstat``: the name may by now be another
    file's): smaller than mapped, and nothing read from it may be reported.
    """
    try:
        now = os.fstat(fd).st_size
    except OSError:
        now = 0
    if now < size:
        raise shrank(path, size, now)


def shrank(path: str | os.PathLike[str], size: int, now: int) -> FileShrank:
    """The one error for a file mapped at ``size`` bytes that now has ``now``."""
    return FileShrank(
        f"the file shrank from {size} to {now} bytes while kseg read it (another process "
        "truncated it): nothing read from it is reported; run again when nothing writes it",
        offset=now, path=os.fspath(path))


def check_dropped(fd: int, path: str, size: int) -> None:
    """A mapped file dropped without ``close``: close ``fd``; if the file shrank, remember it for :func:`shrunk`.

    Run by the garbage collector (``weakref.finalize``), where raising reaches
    nobody: the CLI asks :func:`shrunk` when the command is done instead.
    """
    try:
        check_size(fd, path, size)
    except FileShrank as err:
        _shrunk.append(err)
    finally:
        os.close(fd)


def shrunk() -> FileShrank | None:
    """The first shrink noticed on a mapping dropped without ``close`` (:func:`check_dropped`), if any."""
    return _shrunk[0] if _shrunk else None


_shrunk: list[FileShrank] = []
