"""Checks before a JVM is launched, so the two commonest set-up mistakes fail at once, in one line.

* No Java: pyspark's launcher (``bin/spark-class``) runs ``$JAVA_HOME/bin/java``
  when JAVA_HOME is set, else ``java`` from PATH; without one the JVM never
  starts and pyspark only says "[JAVA_GATEWAY_EXITED] Java gateway process
  exited".  The same lookup is done here first.
* A standalone master nobody answers at (``spark://host:port``, a typo, a
  stopped cluster): Spark retries its registration for a minute and then
  reports "An error occurred while calling None.org.apache.spark...".  A TCP
  connection to each master address, bounded by a few seconds, tells first.
"""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Mapping, Sequence

from kseg.spark.failures import SparkFailed

STANDALONE_PORT = 7077  # Spark's default port of a standalone master
CONNECT_TIMEOUT = 5.0
JAVA_NEEDED = "Spark needs Java 17 or later"


def check_java(environ: Mapping[str, str] = os.environ) -> str:
    """The java that pyspark's launcher will run, or :class:`SparkFailed` saying there is none."""
    home = environ.get("JAVA_HOME")
    if home:
        java = os.path.join(home, "bin", "java")
        if os.path.isfile(java) and os.access(java, os.X_OK):
            return java
        raise SparkFailed(f"spark: no Java: JAVA_HOME={home} has no bin/java ({JAVA_NEEDED})")
    found = shutil.which("java", path=environ.get("PATH", os.defpath))
    if found is None:
        raise SparkFailed(f"spark: no Java: java is not on PATH and JAVA_HOME is not set ({JAVA_NEEDED})")
    return found


def standalone_addresses(master: str) -> list[tuple[str, int]]:
    """``spark://h1:7077,h2`` -> [(h1, 7077), (h2, 7077)]; [] for any other kind of master."""
    if not master.startswith("spark://"):
        return []
    addresses = []
    for part in master[len("spark://"):].split(","):
        host, _, port = part.strip().rstrip("/").rpartition(":")
        if not host or not port.isdigit():
            host, port = part.strip().rstrip("/"), str(STANDALONE_PORT)
        addresses.append((host.strip("[]"), int(port)))
    return addresses


def check_master(master: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """:class:`SparkFailed` when no address of a standalone master accepts a TCP connection."""
    addresses = standalone_addresses(master)
    reasons = [reason for reason in (_connect(host, port, timeout) for host, port in addresses) if reason]
    if addresses and len(reasons) == len(addresses):
        raise SparkFailed(f"spark: cannot reach the master {master}: {'; '.join(reasons)}")


def _connect(host: str, port: int, timeout: float) -> str:
    """'' when ``host:port`` accepts a connection, else why not."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return ""
    except TimeoutError:
        return f"{host}:{port}: no answer in {timeout:g} s"
    except OSError as err:
        return f"{host}:{port}: {err.strerror or err}"


def is_loopback_master(master: str) -> bool:
    """A standalone master on this machine's loopback: the driver then binds to loopback too."""
    hosts: Sequence[str] = [host for host, _ in standalone_addresses(master)]
    return bool(hosts) and all(host in ("127.0.0.1", "localhost", "::1") for host in hosts)
