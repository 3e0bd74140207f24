"""Flat memory in the segment size: txn's replay, dump and recover -o release the mapped pages behind their walks.

A 160 MiB segment (one 16 KB record per batch, each batch with a producer id so that txn's replay
reads it); each command runs in a child started from a small interpreter, its stdout discarded,
and reports its peak resident set (``VmHWM``, file-backed pages included).  A walk that kept the
pages it passed would peak above the file's size; one that releases them stays near the
interpreter's own ~30 MB plus two 16 MiB windows.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kseg.format import RecordSpec, encode_batch

SEGMENT_MIB = 160
LIMIT_KIB = 100 * 1024  # the file is 160 MiB: a walk keeping its pages cannot stay below

CHILD = (
    "import contextlib, os, sys\n"
    "from kseg.cli import cli\n"
    "code = 0\n"
    "with open(os.devnull, 'w') as null, contextlib.redirect_stdout(null):\n"
    "    try:\n"
    "        cli.main(sys.argv[1:], standalone_mode=False)\n"
    "    except SystemExit as done:\n"
    "        code = done.code\n"
    "status = dict(l.split(':', 1) for l in open('/proc/self/status'))\n"
    "print(code, int(status['VmHWM'].split()[0]), file=sys.stderr)\n"
)


@pytest.fixture(scope="module")
def partition(tmp_path_factory) -> Path:
    part = tmp_path_factory.mktemp("memory") / "orders-0"
    part.mkdir()
    ts = 1_700_000_000_000
    with (part / "00000000000000000000.log").open("wb") as out:
        for o in range(SEGMENT_MIB * 2**20 // 16_100):
            out.write(encode_batch([RecordSpec(o, ts + o, None, bytes(16_000))], base_offset=o, producer_id=9,
                                   producer_epoch=0, base_sequence=o))
    return part


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="VmHWM is Linux's")
@pytest.mark.parametrize("command", ["txn", "dump", "dump-json-deep", "recover"])
def test_the_walk_releases_the_pages_behind_it(partition, tmp_path, command):
    args = {
        "txn": ["txn", str(partition)],
        "dump": ["dump", str(partition / "00000000000000000000.log")],
        # one JSON line per record, all of them (base64: the zero values stay as long as the file)
        "dump-json-deep": ["dump", "--format", "json", "--deep-iteration", "--payload", "base64",
                           str(partition / "00000000000000000000.log")],
        "recover": ["recover", str(partition), "-o", str(tmp_path / "out")],  # the producer snapshot's replay
    }[command]
    env = {k: v for k, v in os.environ.items() if k != "KSEG_PURE"}
    done = subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True, text=True, env=env, check=True)
    code, peak_kib = map(int, done.stderr.split()[-2:])
    assert code == 0  # a clean partition: nothing to report, nothing cut
    assert peak_kib < LIMIT_KIB


@pytest.fixture(scope="module")
def clean_logdir(partition, tmp_path_factory) -> Path:
    """The same segment in a log directory as a clean stop leaves it: ``.index``/``.timeindex``,
    ``partition.metadata``, checkpoints and the clean-shutdown marker -- the start serves the files as
    they are, so the verdict's served-damage check walks each segment (it once kept every page)."""
    logs = tmp_path_factory.mktemp("clean") / "kafka-logs"
    part = logs / "orders-0"
    part.mkdir(parents=True)
    os.link(partition / "00000000000000000000.log", part / "00000000000000000000.log")
    subprocess.run([sys.executable, "-m", "kseg", "reindex", "--in-place", str(part)], check=True,
                   capture_output=True)
    end = SEGMENT_MIB * 2**20 // 16_100
    for name in ("recovery-point-offset-checkpoint", "replication-offset-checkpoint"):
        (logs / name).write_text(f"0\n1\norders 0 {end}\n")
    (logs / "log-start-offset-checkpoint").write_text("0\n1\norders 0 0\n")
    (part / "partition.metadata").write_text("version: 0\ntopic_id: q80MkIH9TRe1cdVy6NcxlA\n")
    (logs / ".kafka_cleanshutdown").write_text("")
    return logs


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="VmHWM is Linux's")
@pytest.mark.parametrize("command", ["verify", "triage", "recover --dry-run"])
def test_the_verdicts_walks_release_the_pages_behind_them(clean_logdir, command):
    target = str(clean_logdir if command == "triage" else clean_logdir / "orders-0")
    env = {k: v for k, v in os.environ.items() if k != "KSEG_PURE"}
    done = subprocess.run([sys.executable, "-c", CHILD, *command.split(), "--jobs", "1", target],
                          capture_output=True, text=True, env=env, check=True)
    code, peak_kib = map(int, done.stderr.split()[-2:])
    assert code == 0  # healthy: the broker starts and serves everything
    assert peak_kib < LIMIT_KIB
