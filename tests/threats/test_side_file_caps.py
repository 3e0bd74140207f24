"""Side-file bombs: a 64 MiB sparse checkpoint, ``partition.metadata`` or ``leader-epoch-checkpoint``.

The attacks as found: such a file was read and parsed whole by verify, triage,
txn and recover -- a ``MemoryError`` traceback at 1.9 GB, a ``partition.metadata``
that hung verify (a 64 MiB line quoted in a finding, measured by rich for
minutes), triage printing the whole malformed line (a 4 GiB file: 2.1 GB of
output).  Now no side file is read past 16 MiB (kseg.sidefile): the model's
commands end with one error line and exit 2, verify reports a finding; and no
message quotes more than 1,000 characters of a line (kseg.format.jvm_text.quoted).
Every run here has a 600 MiB address space, as the campaign's runs had.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from logdirs import LogDir, batch
from threatkit import kseg

BOMB = 64 << 20
CAP = 16 << 20
LIMITED = "import resource\nresource.setrlimit(resource.RLIMIT_AS, (600 << 20, 600 << 20))\n"
PARTITION_FILES = ("leader-epoch-checkpoint", "partition.metadata")
LOG_DIR_FILES = ("recovery-point-offset-checkpoint", "log-start-offset-checkpoint", "replication-offset-checkpoint")


def _logs(tmp_path: Path) -> Path:
    logs = LogDir(tmp_path / "kafka-logs")
    logs.partition("orders", 0, {0: [batch(0, 2), batch(2, 2)]})
    return logs.finish(clean=False)


def _bomb(logs: Path, name: str) -> Path:
    """``name`` grown (sparse) to 64 MiB: its text, then zeros."""
    path = logs / "orders-0" / name if name in PARTITION_FILES else logs / name
    os.truncate(path, BOMB)
    return path


@pytest.mark.parametrize("name", PARTITION_FILES + LOG_DIR_FILES)
@pytest.mark.parametrize("command", ["triage", "txn", "recover"])
def test_a_side_file_bomb_ends_the_model_with_one_line(tmp_path, name, command):
    logs = _logs(tmp_path)
    path = _bomb(logs, name)
    args = {"triage": ["triage", str(logs)], "txn": ["txn", str(logs)],
            "recover": ["recover", "--dry-run", str(logs / "orders-0")]}[command]
    result = kseg(*args, prelude=LIMITED)
    assert (result.returncode, result.stdout) == (2, ""), result.stderr[-3000:]
    assert result.stderr == (
        f"kseg: error: {path} byte {CAP}: {BOMB} bytes: far larger than any {name} Kafka writes (kseg reads at most "
        f"{CAP} bytes of a side file); not read\n")


@pytest.mark.parametrize("name", PARTITION_FILES + LOG_DIR_FILES)
def test_verify_reports_a_side_file_bomb_as_a_finding(tmp_path, name):
    logs = _logs(tmp_path)
    path = _bomb(logs, name)
    result = kseg("verify", "--format", "json", str(logs), prelude=LIMITED)
    assert (result.returncode, result.stderr) == (1, "")
    findings = [json.loads(line) for line in result.stdout.splitlines()]
    about = [f for f in findings if f.get("path") == str(path) and f.get("severity") == "error"]
    assert [f["message"] for f in about] == [
        f"{BOMB} bytes: far larger than any {name} Kafka writes (kseg reads at most {CAP} bytes of a side file); "
        "not read"], findings


@pytest.mark.parametrize("command", ["triage", "verify"])
def test_a_long_malformed_line_is_quoted_in_part(tmp_path, command):
    """A leader-epoch-checkpoint under the cap whose first line is 8 MiB of 'x': 1,000 characters quoted."""
    logs = _logs(tmp_path)
    epochs = logs / "orders-0" / "leader-epoch-checkpoint"
    epochs.write_bytes(b"x" * (8 << 20) + b"\n1\n0 0\n")
    result = kseg(command, str(logs), prelude=LIMITED, env={"COLUMNS": "100000"})
    assert (result.returncode, result.stderr) == (1, "")
    assert len(result.stdout) < 20_000
    assert "x" * 1000 + f"... [{(8 << 20) - 1000} more characters]" in result.stdout
    assert "x" * 1001 not in result.stdout


def _huge_index(tmp_path: Path) -> tuple[Path, Path]:
    logs = LogDir(tmp_path / "kafka-logs")
    part = logs.partition("orders", 0, {0: [batch(0, 2)], 2: [batch(2, 2)]})
    logs.finish(clean=False)
    index = part.file(".index", 0)
    os.truncate(index, 100 << 30)  # 100 GiB of holes
    return logs.path, index


@pytest.mark.parametrize("command", ["triage", "txn", "recover"])
def test_a_100_gib_index_ends_the_model_with_one_line(tmp_path, command):
    """Was a MemoryError traceback: the model read the index whole."""
    logs, index = _huge_index(tmp_path)
    args = {"triage": ["triage", str(logs)], "txn": ["txn", str(logs)],
            "recover": ["recover", "--dry-run", str(logs / "orders-0")]}[command]
    result = kseg(*args, prelude=LIMITED, timeout=60)
    assert (result.returncode, result.stdout) == (2, ""), result.stderr[-3000:]
    assert result.stderr == (
        f"kseg: error: {index} byte 2147483647: {100 << 30} bytes: larger than Kafka can map (FileChannel.map "
        "takes at most 2147483647 bytes); the load is not modelled\n")


def test_verify_reports_a_100_gib_index_without_reading_it(tmp_path):
    """Was two minutes of scanning zeros and a 'clean' verdict."""
    logs, index = _huge_index(tmp_path)
    result = kseg("verify", "--format", "json", str(logs), prelude=LIMITED, timeout=60)
    assert (result.returncode, result.stderr) == (1, "")
    findings = [json.loads(line) for line in result.stdout.splitlines()]
    about = [(f["kind"], f["severity"], f["message"]) for f in findings
             if f["type"] == "finding" and f["path"] == str(index)]
    assert about == [("index-sanity", "error", f"{100 << 30} bytes: larger than Kafka can map (FileChannel.map takes "
                                               "at most 2147483647 bytes); not read")], findings
