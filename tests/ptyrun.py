"""kseg run on a real pseudo-terminal, as a person runs it: what the screen got, and the exit code.

The one pty runner of the suite (tests/terminal_width, tests/threats): the child
writes stdout and stderr to the terminal side of a ``pty`` pair; this side reads
until the child closes it (``EIO``), so colour, width and escaping decisions are
the ones kseg makes for a terminal, not for a pipe.
"""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

from support import REPO


def on_pty(*args: str, cwd: Path, window_columns: int | None = None, env_columns: str | None = None,
           stdin_on_terminal: bool = False, timeout: float = 120) -> tuple[int, str]:
    """``kseg ARGS`` with stdout and stderr on a pseudo-terminal: (exit code, the screen's text, ``\\n`` lines).

    ``window_columns``: the terminal's width, set with ``TIOCSWINSZ`` as ``stty cols N`` does (0: a
    terminal that reports no width; None: the pty's own).  ``env_columns``: ``COLUMNS`` in the child's
    environment (None: unset).  ``stdin_on_terminal``: stdin is the terminal too (else ``/dev/null``).
    ``NO_COLOR`` is set, so any ESC byte on the screen came from the input, not from kseg's styles.
    """
    primary, secondary = pty.openpty()
    if window_columns is not None:
        fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 24, window_columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env.update({"PYTHONPATH": str(REPO), "NO_COLOR": "1", "TERM": "xterm"})
    if env_columns is not None:
        env["COLUMNS"] = env_columns
    child = subprocess.Popen([sys.executable, "-m", "kseg", *args],
                             stdin=secondary if stdin_on_terminal else subprocess.DEVNULL,
                             stdout=secondary, stderr=secondary, cwd=cwd, env=env)
    os.close(secondary)
    chunks = []
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(primary)
    code = child.wait(timeout=timeout)
    return code, b"".join(chunks).decode("utf-8", "surrogateescape").replace("\r\n", "\n")
