"""What the threat tests share: a second local account, Kafka's lock taken by a real JVM, a small partition.

The attacks in these tests are run as they were found: by another account on
the same host (created with ``useradd`` when the tests run as root, as CI
does; skipped, with the reason, otherwise), or by a JVM taking the log
directory's lock exactly as Kafka's ``FileLock`` does.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from logdirs import LogDir, batch
from threatkit import TORN

#: The second account: an unprivileged local user sharing /tmp with root.
OTHER_USER = "kseg-threat"

#: Kafka's FileLock, reduced to what matters: FileChannel.open(CREATE, READ, WRITE), then tryLock().
#: "try" prints whether the lock could be taken and exits; "hold" keeps it until stdin closes.
TRY_LOCK_JAVA = """\
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Paths;
import static java.nio.file.StandardOpenOption.*;

public class TryLock {
    public static void main(String[] args) throws Exception {
        try (FileChannel channel = FileChannel.open(Paths.get(args[0]), CREATE, READ, WRITE)) {
            FileLock lock = channel.tryLock();
            System.out.println(lock == null ? "held" : "locked");
            System.out.flush();
            if (lock != null && args.length > 1 && args[1].equals("hold")) {
                while (System.in.read() != -1) { }
            }
        }
    }
}
"""


@dataclass(frozen=True)
class Account:
    name: str
    uid: int
    gid: int

    def run(self, *argv: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        """``argv`` as this account (no shell), its output captured."""
        return subprocess.run(list(argv), user=self.uid, group=self.gid, extra_groups=[], capture_output=True,
                              text=True, timeout=60, check=False, **kwargs)


@pytest.fixture(scope="session")
def other_user() -> Account:
    """A second, unprivileged account (created when running as root)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to create a second account with useradd (CI runs as root)")
    try:
        entry = pwd.getpwnam(OTHER_USER)
    except KeyError:
        subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", OTHER_USER], check=True)
        entry = pwd.getpwnam(OTHER_USER)
    return Account(OTHER_USER, entry.pw_uid, entry.pw_gid)


@pytest.fixture(scope="session")
def try_lock(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """``java -cp <dir> TryLock``: compiled once per session with javac."""
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("needs a JDK (javac, java) to take Kafka's lock as Kafka does")
    classes = tmp_path_factory.mktemp("trylock")
    (classes / "TryLock.java").write_text(TRY_LOCK_JAVA)
    subprocess.run(["javac", "-d", str(classes), str(classes / "TryLock.java")], check=True, timeout=120)
    return ["java", "-XX:TieredStopAtLevel=1", "-cp", str(classes), "TryLock"]


@pytest.fixture
def jvm_holding(try_lock: list[str]) -> Iterator[Callable[[Path], None]]:
    """Start a JVM that takes and keeps the lock on a given .lock file, as a running broker does."""
    children: list[subprocess.Popen[str]] = []

    def hold(lock: Path) -> None:
        child = subprocess.Popen([*try_lock, str(lock), "hold"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 text=True)
        children.append(child)
        assert child.stdout is not None and child.stdout.readline() == "locked\n"

    yield hold
    for child in children:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(timeout=30)


@pytest.fixture
def kafka_logs(tmp_path: Path) -> Path:
    """A log directory with ``orders-0``: two segments, the last with a torn tail and a wrong .index."""
    logs = LogDir(tmp_path / "kafka-logs")
    part = logs.partition("orders", 0, {0: [batch(0, 2), batch(2, 2)], 4: [batch(4, 3)]})
    with part.file(".log", 4).open("ab") as log:
        log.write(TORN)
    part.file(".index", 4).write_bytes(b"\x00" * 8)
    return logs.finish(clean=False)
