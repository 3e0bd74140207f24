"""The one exception hierarchy of kseg.

Every error about input bytes says *where*, as data and not only as text:
``offset`` is the absolute byte position in the file (or buffer) being read,
``field`` a short path to the field at fault (``batch.crc``,
``record[3].headers[0].key``), and ``path`` the file, filled in by the segment
layer when the error passes through it (the format layer never knows file
names).

Two families matter to callers: :class:`Truncated` (the input ended early --
normal at the tail of an active segment) and :class:`Corrupt` (bytes are there
but impossible).  Decoders raise; checkers (``ops.verify``) catch and report.
"""

from __future__ import annotations


class KsegError(Exception):
    """Base of every problem kseg reports about its input."""

    def __init__(
        self,
        message: str,
        *,
        offset: int | None = None,
        field: str | None = None,
        path: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.field = field
        self.path = path

    def with_path(self, path: str | None) -> KsegError:
        """Attach the file name if nobody has yet; return self for ``raise err.with_path(p)``."""
        if self.path is None and path is not None:
            self.path = str(path)
        return self

    def located(self, offset: int, field: str | None = None) -> KsegError:
        """Fill in a position (and field) the raiser did not know; return self."""
        if self.offset is None:
            self.offset = offset
        if self.field is None and field is not None:
            self.field = field
        return self

    def __str__(self) -> str:
        where = []
        if self.path is not None:
            where.append(str(self.path))
        if self.offset is not None:
            where.append(f"byte {self.offset}")
        if self.field:
            where.append(f"({self.field})")
        prefix = " ".join(where)
        return f"{prefix}: {self.message}" if prefix else self.message


class Truncated(KsegError):
    """The input ended before the structure did (a partial trailing batch, a short buffer)."""


class Corrupt(KsegError):
    """The bytes are present but cannot be what Kafka wrote."""


class CrcMismatch(Corrupt):
    """A stored checksum does not match the bytes it covers."""

    def __init__(self, message: str, *, stored: int, computed: int, **where: object) -> None:
        super().__init__(message, **where)  # type: ignore[arg-type]
        self.stored = stored
        self.computed = computed


class InvalidRecord(Corrupt):
    """Structurally invalid records (Kafka's InvalidRecordException): counts, lengths, varints."""


class CodecError(Corrupt):
    """A compressed payload could not be decompressed."""


class LimitExceeded(Corrupt):
    """A length or a decompressed size is beyond the configured cap (hostile input, bombs)."""


class IndexCorrupt(Corrupt):
    """An index or side file fails Kafka's sanity rules."""


class Unsupported(KsegError):
    """Valid-looking input kseg cannot handle: an unknown magic or codec id."""


class EncodeError(KsegError):
    """A request to write something Kafka's format cannot hold (headers in V1, zstd in V0, ...)."""


class Refused(KsegError):
    """A command declines to act: its output exists, an input would be changed, a broker holds the directory.

    Nothing about the input is wrong; the command stops before writing
    anything.  The CLI prints it as one line and exits with :data:`EXIT_USAGE`.
    """


class LogDirLocked(Refused):
    """A change in place while another process (a running broker) holds the log directory's ``.lock``."""


# -- how a command ends (docs in README, "Exit codes") ------------------------------------------

EXIT_OK = 0  # done; verify: nothing wrong
EXIT_PROBLEMS = 1  # problems found, or data was cut
EXIT_USAGE = 2  # usage error, unreadable input, or the command could not complete
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT)
EXIT_TERMINATED = 143  # kill (128 + SIGTERM)
