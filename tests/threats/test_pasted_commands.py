"""Commands kseg prints for a human to paste run exactly the words meant, whatever the directory names hold.

The attack as found: a partition directory named ``$(touch${IFS}PWNED)x-1``
made ``kseg txn`` print ``... abort --topic $(touch${IFS}PWNED)x ...``, which
runs ``touch`` when pasted.  Each printed line is run here through ``sh -c``
with ``printf '%s\\n'`` in place of the tool: exactly the literal words must
come out, one per line, and nothing may be created.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from logdirs import LogDir, batch
from support import FIXTURES
from threatkit import kseg

#: A topic no broker would create, but a directory name a damaged or hostile disk can hold.
HOSTILE = "$(touch${IFS}PWNED)x'\"`touch PWNED2`;touch PWNED3 #"


def _as_printf(line: str, tool: str, scratch: Path) -> list[str]:
    """Run one pasted line with ``printf '%s\\n'`` standing in for ``tool``; the words it received."""
    assert line.startswith(tool + " ")
    shell = "printf '%s\\n'" + line[len(tool):]
    ran = subprocess.run(["sh", "-c", shell], cwd=scratch, capture_output=True, text=True, timeout=30, check=True)
    assert list(scratch.iterdir()) == []  # no PWNED, nothing at all
    return ran.stdout.splitlines()


def test_txn_abort_commands_quote_the_topic_and_the_bootstrap_server(tmp_path):
    logs = tmp_path / "logs"
    shutil.copytree(FIXTURES / "txn" / "logs", logs)
    (logs / "orders-1").rename(logs / f"{HOSTILE}-1")
    bootstrap = "b:9092;touch PWNED4"
    result = kseg("txn", "--bootstrap-server", bootstrap, "logs", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    pasted = [line.strip().removeprefix("$ ") for line in result.stdout.splitlines()
              if line.strip().startswith("$ kafka-transactions.sh")]
    scratch = tmp_path / "paste"
    scratch.mkdir()
    words = [_as_printf(line, "kafka-transactions.sh", scratch) for line in pasted]
    assert ["--bootstrap-server", bootstrap, "abort", "--topic", HOSTILE, "--partition", "1", "--start-offset", "0"] in words
    assert all(w[:2] == ["--bootstrap-server", bootstrap] for w in words) and len(words) == 3


def test_triage_next_lines_quote_the_paths(tmp_path):
    logs = LogDir(tmp_path / "kafka-logs")
    damaged = batch(2, 2)
    damaged = damaged[:-1] + bytes([damaged[-1] ^ 1])  # a CRC that fails: recovery cuts here
    logs.partition(HOSTILE, 0, {0: [batch(0, 2), damaged], 4: [batch(4, 3)]})
    logs.finish(clean=False, recovery_points={(HOSTILE, 0): 0})
    result = kseg("triage", "kafka-logs", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    pasted = [line.strip().removeprefix("next: ") for line in result.stdout.splitlines()
              if line.startswith(("  next: kseg ", "        kseg "))]
    scratch = tmp_path / "paste"
    scratch.mkdir()
    partition = f"kafka-logs/{HOSTILE}-0"
    assert [_as_printf(line, "kseg", scratch) for line in pasted] == [
        # the name's space makes the checkpoints unreadable to Kafka: their dump comes first
        ["dump", "kafka-logs/recovery-point-offset-checkpoint"],
        ["dump", "kafka-logs/replication-offset-checkpoint"],
        ["verify", partition],
        ["recover", "--dry-run", "--salvage", partition],
    ]
