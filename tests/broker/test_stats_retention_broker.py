"""``kseg stats``' retention forecast against a real Kafka 4.3.0 broker's own retention pass.

A single-node broker writes a topic with retention off (``log.retention.ms=-1``), small segments
(``internal.segment.bytes``) and future timestamps accepted (``log.message.timestamp.after.max.ms``): records 10 days old, then 10 days in the future, then old again, then
current. After a clean stop kseg forecasts the next pass at ``log.retention.ms`` = 1 day; the broker is
then restarted with that retention, a 1 s ``log.retention.check.interval.ms`` and a 1 s
``log.initial.task.delay.ms``, and the segments it deletes (renamed ``*.log.deleted``) must be exactly
the ones forecast -- the old ones before the first segment holding a future timestamp, which pins
every old segment after it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import kafka_broker as kb
from support import REPO

DAY = 86_400_000
TOPIC = "ret"


def live_segments(partition: Path) -> set[int]:
    return {int(p.name[:20]) for p in partition.glob("*.log")}


def forecast(log_dir: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "kseg", "stats", "--format", "json", "--retention-ms", str(DAY),
                           str(log_dir)], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    [part] = [o for o in map(json.loads, proc.stdout.splitlines()) if o["type"] == "partition" and o["topic"] == TOPIC]
    return part


def produce(bootstrap: str) -> None:
    prod = kb.producer(bootstrap)
    now = int(time.time() * 1000)
    try:
        for n, (stamp, count) in enumerate([(now - 10 * DAY, 80), (now + 10 * DAY, 20), (now - 10 * DAY, 80),
                                            (now - 1000, 20)]):
            futures = [prod.send(TOPIC, key=b"k%d-%d" % (n, i), value=b"v" * 400, partition=0, timestamp_ms=stamp + i)
                       for i in range(count)]
            prod.flush()
            for future in futures:
                future.get(timeout=60)  # a rejected record fails the test here
    finally:
        prod.close()


def test_broker_deletes_what_stats_forecasts(broker_env: dict[str, str], tmp_path: Path) -> None:
    broker = kb.Broker(tmp_path / "node", broker_env)
    broker.format([("log.retention.ms", "-1"), ("log.roll.ms", str(365 * DAY)),
                   ("log.message.timestamp.after.max.ms", str(365 * DAY))])  # default: 1 h into the future
    try:
        broker.start()
        kb.create_topic(broker.bootstrap, TOPIC, 1, {"internal.segment.bytes": "16384"})
        produce(broker.bootstrap)
        broker.stop()
        partition = broker.data / f"{TOPIC}-0"
        before = live_segments(partition)
        part = forecast(broker.data)
        deletes = {d["base_offset"] for d in part["retention"]["deletes"]}
        held = part["retention"]["held"]
        assert len(before) >= 5 and deletes and held[0]["why"].startswith("future timestamp")
        assert any(h["why"].startswith("pinned by segment") for h in held)

        with (broker.root / "server.properties").open("a") as props:
            props.write(f"log.retention.ms={DAY}\nlog.retention.check.interval.ms=1000\n"
                        "log.initial.task.delay.ms=1000\n")
        broker.start()
        deadline = time.monotonic() + 90
        while live_segments(partition) == before and time.monotonic() < deadline:
            time.sleep(0.5)
        time.sleep(3)  # a few more passes: nothing else may go
        after = live_segments(partition)
        broker.stop()
        assert before - after == deletes, broker.server_log()[-3000:]
        assert {int(p.name[:20]) for p in partition.glob("*.log.deleted")} <= deletes
    finally:
        broker.kill()
