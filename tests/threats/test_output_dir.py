"""``-o OUTDIR`` never lands in the evidence or in a Kafka log directory, and a killed run never looks finished.

The attacks as found: ``recover orders-0 -o orders-0/sub`` wrote into the
partition being examined; ``-o LOGDIR/invoice-0-recovered`` put a directory a
broker cannot parse into its log directory, so the broker refused to start
(``KafkaException: Found directory .../invoice-0-recovered, 'invoice-0-recovered'
is not in the form of topic-partition`` -- kseg's loading model, R1.1, says the
same of such a log directory below); and a ``kill -9`` part-way through
``recover -o`` or ``convert -o`` left an OUTDIR with every file name in place.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import REPO
from threatkit import files_of, kseg

from kseg.recovery.loading import predict_log_dir

WRITERS = {
    "recover": ["recover"],
    "convert": ["convert", "--to-magic", "2", "--skip-corrupt"],
    "reindex": ["reindex"],
}


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_an_outdir_inside_the_input_is_refused(kafka_logs, command):
    part = kafka_logs / "orders-0"
    before = _tree(kafka_logs)
    result = kseg(*WRITERS[command], str(part), "-o", str(part / "sub"))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"kseg: error: {part}/sub is inside the input {part}: choose an -o outside the evidence\n"
    )
    assert _tree(kafka_logs) == before and not (part / "sub").exists()


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_an_outdir_in_a_kafka_log_directory_is_refused(kafka_logs, tmp_path, command):
    part = kafka_logs / "orders-0"
    before = _tree(kafka_logs)
    link = tmp_path / "looks-elsewhere"
    link.symlink_to(kafka_logs, target_is_directory=True)  # the real path decides, not the name typed
    for out in (kafka_logs / "orders-0-recovered", link / "orders-0-recovered", kafka_logs / "deeper" / "x"):
        result = kseg(*WRITERS[command], str(part), "-o", str(out))
        assert (result.returncode, result.stdout) == (2, "")
        assert result.stderr == (
            f"kseg: error: {out} is inside {kafka_logs}, which is a Kafka log directory (a broker there would "
            "refuse to start, or load what kseg writes): choose an -o outside it\n"
        )
    assert _tree(kafka_logs) == before and sorted(p.name for p in kafka_logs.iterdir() if p.is_dir()) == ["orders-0"]


def test_what_the_refusal_prevents_kafka_refuses_to_start_on(kafka_logs):
    (kafka_logs / "orders-0-recovered").mkdir()
    error = predict_log_dir(kafka_logs).error
    assert error is not None and (error.exception, error.consequence, error.rule) == (
        "org.apache.kafka.common.KafkaException", "broker stops", "R1.1")
    assert "'orders-0-recovered' is not in the form of topic-partition" in error.message


PAUSE = """
import os, time
from kseg.recovery import segment_files
_seal = segment_files.TempFile.seal
def _paused(self):
    _seal(self)
    open({ready!r}, "w").close()
    time.sleep(120)  # the test kills us here, after the first file is written
segment_files.TempFile.seal = _paused
"""


@pytest.mark.parametrize("command", ["recover", "convert"])
def test_a_killed_run_leaves_an_outdir_that_says_it_is_unfinished(kafka_logs, tmp_path, command):
    out = tmp_path / "out" / "orders-0"
    ready = tmp_path / "ready"
    code = (PAUSE.format(ready=str(ready)) + "\nimport sys\nfrom kseg.cli import main\n"
            "sys.argv = ['kseg', *sys.argv[1:]]\nmain()\n")
    run = subprocess.Popen([sys.executable, "-c", code, *WRITERS[command], str(kafka_logs / "orders-0"), "-o",
                            str(out)], env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert run.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    run.send_signal(signal.SIGKILL)
    run.wait(timeout=30)
    assert (out / "KSEG-UNFINISHED").read_text().startswith("kseg was writing this directory and did not finish")
    prediction = predict_log_dir(out.parent)  # the marker is nothing Kafka trips on
    assert prediction.error is None and (out / "KSEG-UNFINISHED").is_file()
    verified = kseg("verify", "--format", "json", str(out))  # but verify says what it is
    unfinished = [json.loads(line) for line in verified.stdout.splitlines() if '"kind": "unfinished-output"' in line]
    assert verified.returncode == 1 and len(unfinished) == 1
    assert unfinished[0]["severity"] == "error"
    again = kseg(*WRITERS[command], str(kafka_logs / "orders-0"), "-o", str(out))
    assert (again.returncode, again.stdout) == (2, "")
    assert again.stderr == (
        f"kseg: error: {out}/KSEG-UNFINISHED exists: a kseg run writing {out} did not finish; remove it and run again\n"
    )


@pytest.mark.parametrize("command", ["recover", "convert"])
def test_a_finished_run_leaves_no_marker(kafka_logs, tmp_path, command):
    out = tmp_path / "out" / "orders-0"
    result = kseg(*WRITERS[command], str(kafka_logs / "orders-0"), "-o", str(out))
    assert result.returncode == 1, result.stderr  # the torn tail is cut (recover) or skipped (convert)
    names = sorted(files_of(out))
    assert "KSEG-UNFINISHED" not in names and "00000000000000000004.log" in names
