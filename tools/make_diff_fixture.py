"""Make fixtures/diff/unclean-election/: two replicas of one partition after a real unclean leader election.

A three-node KRaft quorum of Kafka 4.3.0 (``../shared/kafka/kafka.sh``; every node broker+controller) on
127.0.0.1, driven through ``tests/broker/kafka_broker.py`` with kafka-python. Topic ``u``: one partition,
replicas on nodes 1 and 2 only (node 3 keeps the controller quorum alive), ``min.insync.replicas=1``,
``unclean.leader.election.enable=true``:

1. 10 records (acks=all) while both replicas are in sync: leader 1;
2. node 2 stopped (SIGTERM): the ISR shrinks to [1]; 5 more records on node 1 (acknowledged: ISR [1]);
   group ``g`` reads all 15 from node 1 and commits offset 15 (``__consumer_offsets-0``, on every node);
3. node 1 SIGKILLed; node 2 started: with nodes 2 and 3 the quorum has a majority again, node 1 is
   fenced, and the controller elects node 2 **uncleanly** (the only live replica, not in the ISR);
4. 7 records on node 2 under its new leader epoch;
5. both log directories copied (u-0, __consumer_offsets-0, the checkpoints): ``node1/`` (as the kill left
   it) and ``node2/`` (live, the leader) --
   what ``kseg diff`` reads before node 1 returns;
6. node 1 started again: it becomes node 2's follower and truncates; its server.log's truncation lines
   and its log afterwards go into ``kafka-after.json``: what Kafka really did, to hold kseg's prediction
   against (tests/diff/test_real_unclean_election.py).

    python tools/make_diff_fixture.py [OUTDIR]       # default fixtures/diff/unclean-election

The bytes differ from run to run (timestamps, producer ids, cluster and topic ids); PROVENANCE.md is
rewritten with what this run made, with sha256.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "broker"))

import kafka_broker as kb  # noqa: E402

OUT_DEFAULT = REPO / "fixtures" / "diff" / "unclean-election"
TOPIC = "u"
SETTINGS = ["unclean.leader.election.enable=true", "unclean.leader.election.interval.ms=1000",
            "min.insync.replicas=1", "broker.session.timeout.ms=3000", "broker.heartbeat.interval.ms=500",
            "replica.high.watermark.checkpoint.interval.ms=1000", "log.initial.task.delay.ms=1000",
            "log.flush.offset.checkpoint.interval.ms=1000", "offsets.topic.num.partitions=1",
            "transaction.state.log.num.partitions=1", "metadata.max.idle.interval.ms=0",
            "log.index.size.max.bytes=4096"]  # preallocated .index 4096 bytes, not 10 MiB
GROUP = "g"
KEEP = ("recovery-point-offset-checkpoint", "replication-offset-checkpoint", "log-start-offset-checkpoint",
        ".kafka_cleanshutdown", "meta.properties")


def log(text: str) -> None:
    print(f"[make_diff_fixture] {text}", file=sys.stderr, flush=True)


def ports(env: dict[str, str]) -> list[int]:
    found: list[int] = []
    while len(found) < 3:
        port = int(kb.ksh(env, "free-port").strip())
        if all(abs(port - q) > 1 for q in found):
            found.append(port)
    return found


def leader_of(bootstrap: str) -> tuple[int, list[int]]:
    """(leader, isr) of u-0 as the cluster's metadata says."""
    from kafka.admin import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
    try:
        part = admin.describe_topics([TOPIC])[0]["partitions"][0]
        return part.get("leader_id", part.get("leader")), sorted(part.get("isr_nodes", part.get("isr")) or [])
    finally:
        admin.close()


def wait_until(what: str, check, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except Exception as error:  # the cluster is changing under us: ask again
            log(f"waiting for {what}: {error}")
        time.sleep(1)
    raise TimeoutError(what)


def send(bootstrap: str, first: int, count: int, tag: str) -> list[int]:
    prod = kb.producer(bootstrap, retries=20)
    try:
        done = kb.send_all(prod, TOPIC, [(0, f"k{(first + i) % 4}".encode(), f"{tag}{first + i}".encode())
                                         for i in range(count)])
    finally:
        prod.close()
    return [r.offset for r in done]


def consume_and_commit(bootstrap: str, count: int) -> int:
    """Group GROUP reads ``count`` records of u-0 from the start and commits its position."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=GROUP, enable_auto_commit=False,
                             auto_offset_reset="earliest", request_timeout_ms=30000)
    try:
        tp = TopicPartition(TOPIC, 0)
        consumer.assign([tp])
        seen = 0
        deadline = time.monotonic() + 60
        while seen < count and time.monotonic() < deadline:
            seen += sum(len(r) for r in consumer.poll(timeout_ms=500).values())
        consumer.commit()
        return consumer.committed(tp)
    finally:
        consumer.close()


def copy_logdir(data: Path, into: Path) -> None:
    into.mkdir(parents=True)
    for name in KEEP:
        if (data / name).is_file():
            shutil.copy2(data / name, into / name)
    for pdir in (f"{TOPIC}-0", "__consumer_offsets-0"):
        shutil.copytree(data / pdir, into / pdir)


def run(out: Path) -> None:
    env = kb.broker_env()
    work = Path(tempfile.mkdtemp(prefix="kseg-diff-fixture-"))
    dirs = [work / f"node{i}" for i in (1, 2, 3)]
    ps = ports(env)
    voters = ",".join(f"{i}@127.0.0.1:{p + 1}" for i, p in enumerate(ps, 1))
    boot = {i: f"127.0.0.1:{p}" for i, p in enumerate(ps, 1)}
    facts: dict[str, object] = {}
    try:
        for i, (d, p) in enumerate(zip(dirs, ps, strict=True), 1):
            kb.ksh(env, "format", d, i, p, voters, *SETTINGS)
        for d in dirs:
            kb.ksh(env, "start", d, "--no-wait")
        for d in dirs:
            kb.ksh(env, "wait", d, 240, timeout=260)
        from kafka.admin import KafkaAdminClient, NewTopic

        admin = KafkaAdminClient(bootstrap_servers=boot[3], request_timeout_ms=30000)
        admin.create_topics([NewTopic(TOPIC, replica_assignments={0: [1, 2]},
                                      topic_configs={"unclean.leader.election.enable": "true",
                                                     "min.insync.replicas": "1"})])
        admin.close()
        wait_until("u-0 led by 1 with ISR [1, 2]", lambda: leader_of(boot[3]) == (1, [1, 2]))
        facts["step1_offsets"] = send(boot[1], 0, 10, "a")
        log(f"step 1: {facts['step1_offsets']}")
        kb.ksh(env, "stop", dirs[1])
        wait_until("ISR [1]", lambda: leader_of(boot[3]) == (1, [1]))
        facts["step2_offsets"] = send(boot[1], 10, 5, "b")
        log(f"step 2: {facts['step2_offsets']}")
        facts["group_committed"] = consume_and_commit(boot[1], 15)
        log(f"group {GROUP}: committed {facts['group_committed']}")
        time.sleep(2)  # node 1's replication-offset-checkpoint catches the high watermark
        kb.ksh(env, "kill", dirs[0])
        kb.ksh(env, "start", dirs[1], "--no-wait")
        kb.ksh(env, "wait", dirs[1], 240, timeout=260)
        wait_until("node 2 elected uncleanly", lambda: leader_of(boot[3])[0] == 2)
        facts["election"] = leader_of(boot[3])
        facts["step4_offsets"] = send(boot[2], 15, 7, "c")
        log(f"step 4: {facts['step4_offsets']}")
        time.sleep(2)
        shutil.rmtree(out, ignore_errors=True)
        copy_logdir(dirs[0] / "data", out / "node1")
        copy_logdir(dirs[1] / "data", out / "node2")
        kb.ksh(env, "start", dirs[0], "--no-wait")
        kb.ksh(env, "wait", dirs[0], 240, timeout=260)
        wait_until("node 1 back in the ISR", lambda: leader_of(boot[3]) == (2, [1, 2]))
        time.sleep(2)
        facts["kafka_log"] = [line for line in (dirs[0] / "logs" / "server.log").read_text(errors="replace")
                              .splitlines() if re.search(r"\bu-0\b", line) and "runcat" in line]
        facts["node1_after"] = [[b, last] for b, last in batches(dirs[0] / "data" / f"{TOPIC}-0")]
        facts["node2_after"] = [[b, last] for b, last in batches(dirs[1] / "data" / f"{TOPIC}-0")]
        facts["node1_epochs_after"] = (dirs[0] / "data" / f"{TOPIC}-0" / "leader-epoch-checkpoint").read_text()
    finally:
        subprocess.run([str(kb.KAFKA_SH), "kill", *map(str, dirs)], check=False, env=env, capture_output=True,
                       timeout=120)
    facts["server_properties_node1"] = (dirs[0] / "server.properties").read_text()
    (out / "kafka-after.json").write_text(_lines(facts))
    provenance(out, facts)
    shutil.rmtree(work, ignore_errors=True)


def batches(pdir: Path) -> list[tuple[int, int]]:
    """(base, last) of every batch in the partition directory, by kseg's walker."""
    from kseg.ops.diff.batches import iter_batches
    from kseg.ops.discover import segment_logs

    return [(r.base, r.last) for r in iter_batches(segment_logs(pdir), 0, 1 << 62)]


def _lines(facts: dict[str, object]) -> str:
    """JSON with one line per key (lists stay on their line)."""
    inner = ",\n".join(f" {json.dumps(k)}: {json.dumps(v)}" for k, v in facts.items())
    return "{\n" + inner + "\n}\n"


def provenance(out: Path, facts: dict[str, object]) -> None:
    rows = []
    for path in sorted(p for p in out.rglob("*") if p.is_file() and p.name != "PROVENANCE.md"):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        rows.append(f"| `{path.relative_to(out)}` | {path.stat().st_size} | `{digest}` |")
    text = (__doc__ or "").split("    python tools")[0]
    (out / "PROVENANCE.md").write_text(
        "# A real unclean leader election (Kafka 4.3.0, three KRaft nodes)\n\n"
        "Made by `tools/make_diff_fixture.py` (`KSEG_SHARED=../shared python tools/make_diff_fixture.py`). "
        "What it did:\n\n" + text.split("\n", 2)[2]
        + "\nWhat this run recorded (`kafka-after.json`): offsets acknowledged at steps 1, 2 and 4; the "
          "(leader, ISR) after the election; node 1's server.log lines about truncating u-0 after it "
          "returned; the batches (base, last) of both replicas afterwards.\n\n"
        + "```json\n" + _lines({k: v for k, v in facts.items() if k != "server_properties_node1"})
        + "```\n\n| file | bytes | sha256 |\n|---|---|---|\n" + "\n".join(rows) + "\n")


if __name__ == "__main__":
    run(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT_DEFAULT)
