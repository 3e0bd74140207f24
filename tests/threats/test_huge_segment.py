"""A segment over 2 GiB: a finding or one error line, never a ``struct.error`` traceback.

The attack as found: a ``.log`` larger than ``Integer.MAX_VALUE`` bytes (Kafka
writes none -- ``log.segment.bytes`` is an int -- but a damaged or forged file
can be that large) made ``reindex``, ``recover`` and ``triage`` end in
``struct.error: 'i' format requires ...`` (an index position past 2^31 - 1)
while ``verify`` called it clean.  Kafka's ``FileRecords.open`` throws
``KafkaException("The size of segment ... is larger than the maximum allowed
segment size of 2147483647")`` and the broker stops (R2.6, R9.3): proved here
by LoadLogDir on the same directory.

The segment is sparse (2.2 GiB on 100 KiB of disk): 20 valid batches, the last
19 of them 120 MiB each whose value is zeros, so the file is valid from end to
end and every walk reaches positions past 2^31.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from logdirs import LogDir, batch
from threatkit import kseg

from kseg.format import encode_batch
from kseg.format.model import RecordSpec

#: 19 batches of this (a 120 MiB zero value) after a small one: the last starts at byte 2,264,925,607.
VALUE_BYTES = 120 * 2**20
BIG_BATCHES = 19



def _sparse_partition(root: Path) -> Path:
    """``kafka-logs/orders-0``: one batch of offsets 0-1, then 2..20 of 120 MiB each, the zeros left as holes."""
    logs = LogDir(root / "kafka-logs")
    part = logs.partition("orders", 0, {0: [batch(0, 2)]})
    logs.finish(clean=False)
    big = encode_batch([RecordSpec(0, 1_700_000_000_000, b"k", bytes(VALUE_BYTES))])
    head = big.rstrip(b"\0")  # the CRC covers attributes..end: the same for every base offset
    with part.file(".log").open("r+b") as log:
        position = log.seek(0, 2)
        for i in range(BIG_BATCHES):
            log.seek(position)
            log.write((2 + i).to_bytes(8, "big") + head[8:])
            position += len(big)
        log.truncate(position)
    return logs.path


@pytest.fixture(scope="module")
def huge(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _sparse_partition(tmp_path_factory.mktemp("huge"))


def _log(huge: Path) -> Path:
    return huge / "orders-0" / "00000000000000000000.log"


def _kafka_message(huge: Path) -> str:
    size = _log(huge).stat().st_size
    return (f"The size of segment {_log(huge)} ({size}) is larger than the maximum allowed segment size of "
            "2147483647")


def test_the_segment_is_valid_past_two_gib(huge):
    size = _log(huge).stat().st_size
    assert size == 97 + BIG_BATCHES * 125_829_195 > 2**31
    assert _log(huge).stat().st_blocks * 512 < 16 * 2**20  # sparse


@pytest.mark.parametrize("args", [["reindex", "--check"], ["reindex", "-o", "OUT"], ["recover", "--dry-run"],
                                  ["recover", "--salvage", "--dry-run"], ["recover", "-o", "OUT"]])
def test_rebuilding_commands_end_with_one_line(huge, tmp_path, args):
    args = [str(tmp_path / "out") if a == "OUT" else a for a in args]
    result = kseg(*args, str(huge / "orders-0"))
    size = _log(huge).stat().st_size
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"kseg: error: {_log(huge)} byte 2147483647 (segment.size): the segment is {size} bytes, larger than the "
        "maximum allowed segment size of 2147483647 (Kafka's FileRecords refuses to open it; index positions are "
        "32-bit): no index can be rebuilt\n")
    assert not (tmp_path / "out").exists()


def test_triage_says_the_broker_stops(huge):
    result = kseg("triage", "--format", "json", str(huge))
    assert (result.returncode, result.stderr) == (1, "")
    partition = json.loads(result.stdout.splitlines()[0])
    assert (partition["outcome"], partition["consequence"]) == ("fails", "broker stops")
    assert partition["error"] == {"exception": "org.apache.kafka.common.KafkaException",
                                  "message": _kafka_message(huge)}


def test_verify_and_txn_report_it(huge):
    verify = kseg("verify", "--format", "json", str(huge / "orders-0"))
    assert (verify.returncode, verify.stderr) == (1, "")
    findings = [json.loads(line) for line in verify.stdout.splitlines()]
    assert any(f.get("kind") == "load-fails" and _kafka_message(huge) in f.get("message", "") for f in findings), \
        verify.stdout
    txn = kseg("txn", str(huge))
    assert (txn.returncode, txn.stderr) == (1, "")  # the next start's verdict: the broker stops (docs/cli.md)
    assert f"error: the partition does not load: org.apache.kafka.common.KafkaException: {_kafka_message(huge)}" \
        in txn.stdout


#: Kafka's own first step on the segment: ``LogSegment.open`` -> ``FileRecords.open(file, ...)``.
OPEN_SEGMENT_JAVA = """\
import java.io.File;
import org.apache.kafka.common.record.internal.FileRecords;

public class OpenSegment {
    public static void main(String[] args) throws Exception {
        try (FileRecords records = FileRecords.open(new File(args[0]), false)) {
            System.out.println("opened " + records.sizeInBytes());
        } catch (Exception e) {
            System.out.println(e.getClass().getName() + ": " + e.getMessage());
        }
    }
}
"""


def test_kafka_refuses_to_open_it(huge, tmp_path):
    """Kafka 4.3.0's FileRecords.open (the oracle jar) on the segment throws the KafkaException the model raises.

    That it stops the broker (a KafkaException is no IOException, R9.3) is shown
    by LoadLogDir in :func:`test_kafka_load_stops` -- about two minutes here, as the
    driver hashes the 2.2 GiB file, so it runs with ``KSEG_SLOW_THREATS=1`` only.
    """
    import subprocess

    from kafka_storage import storage_or_skip

    storage = storage_or_skip()
    (tmp_path / "OpenSegment.java").write_text(OPEN_SEGMENT_JAVA)
    javac = str(Path(storage.java).with_name("javac"))
    subprocess.run([javac, "-cp", storage.classpath, "-d", str(tmp_path), str(tmp_path / "OpenSegment.java")],
                   check=True, timeout=300)
    ran = subprocess.run([storage.java, "-cp", f"{tmp_path}:{storage.classpath}", "OpenSegment", str(_log(huge))],
                         capture_output=True, text=True, check=True, timeout=300)
    assert ran.stdout == f"org.apache.kafka.common.KafkaException: {_kafka_message(huge)}\n"


@pytest.mark.skipif(os.environ.get("KSEG_SLOW_THREATS") != "1", reason="about 2 minutes: set KSEG_SLOW_THREATS=1")
def test_kafka_load_stops(huge):
    """LoadLogDir (Kafka 4.3.0's loading code) on the directory itself: FileRecords.open throws, the broker stops."""
    from kafka_storage import storage_or_skip

    [objects] = storage_or_skip().load([huge], "--in-place", "--no-files", "--no-kafka-log")
    partition = next(o for o in objects if o.get("type") == "partition")
    assert (partition["outcome"], partition["broker_effect"]) == ("fails", "broker_does_not_start"), partition
    assert partition["error"]["exception"] == "org.apache.kafka.common.KafkaException"
    assert partition["error"]["message"] == _kafka_message(huge).replace(str(huge.parent) + "/", "")
