"""``kseg grep`` → ``--export`` → produce → consume through a real Kafka 4.3.0 broker (../shared/kafka).

kafka-python writes records with keys, headers and CreateTime timestamps into topic ``src``; kseg greps
the broker's own log directory (live: Kafka's writes are in the page cache), exports the matches as JSON
Lines and as kafka-console-producer text; kafka-python produces each export into a topic of its own (the
JSON Lines with their timestamps; the console text parsed with LineMessageReader's rules, as
kafka-console-producer.sh would); a consumer reads both back.  Keys, values, headers and (JSON Lines)
CreateTime must equal what was first produced, in order.  About 20 s here (one broker start).
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import kafka_broker as kb

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "grep"))
from line_message_reader import read_records  # noqa: E402

T0 = 1_700_000_000_000


def _raw(value: object) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, dict):
        return base64.b64decode(value["base64"])
    assert isinstance(value, str)
    return value.encode()


def _consume(bootstrap: str, topic: str, count: int) -> list[tuple]:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False,
                             consumer_timeout_ms=20000)
    try:
        consumer.assign([TopicPartition(topic, 0)])
        out = []
        for message in consumer:
            out.append((message.key, message.value, [(k, v) for k, v in message.headers], message.timestamp))
            if len(out) == count:
                break
        return out
    finally:
        consumer.close()


def _kseg(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kseg", *args], capture_output=True, text=True, cwd=REPO, timeout=120)


def test_grep_export_produce_consume(broker_env: dict[str, str], tmp_path: Path) -> None:
    broker = kb.Broker(tmp_path / "broker", broker_env)
    broker.format([("offsets.topic.num.partitions", "1")])
    broker.start()
    try:
        kb.create_topic(broker.bootstrap, "src", 1)
        prod = kb.producer(broker.bootstrap)
        sent = []
        for i in range(12):
            key = None if i == 3 else f"order-{i}".encode()
            value = f"value {i} \u2603".encode() if i != 5 else None
            headers = [("trace-id", f"t-{i % 4}".encode()), ("src", b"kseg")] if i % 2 else []
            prod.send("src", key=key, value=value, headers=headers, partition=0, timestamp_ms=T0 + 1000 * i)
            sent.append((key, value, headers, T0 + 1000 * i))
        prod.flush()
        prod.close()
        part = broker.data / "src-0"
        jsonl, console = tmp_path / "out.jsonl", tmp_path / "out.txt"
        assert _kseg("grep", "--export", str(jsonl), str(part)).returncode == 0
        assert _kseg("grep", "--export", str(console), "--as", "console", str(part)).returncode == 0
        wanted = sent  # every record: no predicate
        rows = [json.loads(line) for line in jsonl.read_text().splitlines()]
        kb.create_topic(broker.bootstrap, "dst-jsonl", 1)
        kb.create_topic(broker.bootstrap, "dst-console", 1)
        prod = kb.producer(broker.bootstrap)
        for row in rows:
            prod.send("dst-jsonl", key=_raw(row["key"]), value=_raw(row["value"]), partition=0,
                      headers=[(_raw(k).decode(), _raw(v)) for k, v in row["headers"]],  # type: ignore[union-attr]
                      timestamp_ms=row["timestamp"])
        for key, value, headers in read_records(console.read_bytes(), null_marker="\u2400"):
            prod.send("dst-console", key=key, value=value, headers=headers, partition=0)
        prod.flush()
        prod.close()
        assert _consume(broker.bootstrap, "dst-jsonl", len(wanted)) == wanted
        from_console = _consume(broker.bootstrap, "dst-console", len(wanted))
        assert [(k, v, h) for k, v, h, _ in from_console] == [(k, v, h) for k, v, h, _ in wanted]
        found = _kseg("grep", "--header", "trace-id=t-1", "--format", "json", str(broker.data / "dst-jsonl-0"))
        assert [json.loads(line)["timestamp"] for line in found.stdout.splitlines()] == [T0 + 1000, T0 + 5000, T0 + 9000]
    finally:
        broker.kill()
