"""Write fixtures/metadata/churn-3node/: the KRaft metadata of a real 3-node Kafka 4.3.0 quorum under churn.

Run again with ``KSEG_SHARED=../shared python tools/make_metadata_churn_fixture.py`` (the test venv's Python:
kafka.sh needs pyspark, the admin client is kafka-python). It starts three combined broker+controller nodes on
127.0.0.1 with ``../shared/kafka/kafka.sh``, then, through kafka-python's admin client: creates topics, changes
and deletes configs, adds and removes ACLs (StandardAuthorizer), deletes and re-creates a topic, reassigns
partitions, kills node 3 (its ISR memberships shrink, it is fenced), starts it again (unfenced, ISR grows),
and stops all three. Node 1's ``__cluster_metadata-0`` (snapshots forced small) and ``meta.properties`` are
copied; PROVENANCE.md in the output records the steps, the times and the sha256 of every file.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kafka import KafkaAdminClient, TopicPartition
from kafka.admin import (
    ACL,
    ACLFilter,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    ConfigResource,
    ConfigResourceType,
    NewTopic,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("KSEG_SHARED", REPO.parent / "shared"))
KAFKA_SH = SHARED / "kafka" / "kafka.sh"
OUT = REPO / "fixtures" / "metadata" / "churn-3node"
ENV = {**os.environ, "PYTHON": sys.executable}
EXTRA = ["authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
         "allow.everyone.if.no.acl.found=true", "super.users=User:ANONYMOUS",
         "metadata.log.max.record.bytes.between.snapshots=4000", "metadata.log.max.snapshot.interval.ms=2000"]
STEPS: list[str] = []


def ksh(*args: object, timeout: float = 240) -> str:
    return subprocess.run([str(KAFKA_SH), *map(str, args)], env=ENV, check=True, capture_output=True, text=True,
                          timeout=timeout).stdout


def step(text: str) -> None:
    STEPS.append(f"{time.strftime('%H:%M:%S')} {text}")
    print(STEPS[-1], flush=True)


def churn(admin: KafkaAdminClient, nodes: list[Path]) -> None:
    admin.create_topics([NewTopic("orders", 3, 2), NewTopic("payments", 1, 3), NewTopic("temp", 2, 1)])
    step("created orders (3 partitions, RF 2), payments (1, RF 3), temp (2, RF 1)")
    time.sleep(3)
    admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "orders", configs={"retention.ms": "3600000"})])
    admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "payments",
                                        configs={"cleanup.policy": "compact", "min.insync.replicas": "2"})])
    step("configs: orders retention.ms=3600000; payments cleanup.policy=compact, min.insync.replicas=2")
    orders = ResourcePattern(ResourceType.TOPIC, "orders", ACLResourcePatternType.LITERAL)
    admin.create_acls([ACL("User:alice", "*", ACLOperation.READ, ACLPermissionType.ALLOW, orders),
                       ACL("User:bob", "*", ACLOperation.WRITE, ACLPermissionType.ALLOW, orders)])
    step("ACLs: User:alice READ orders, User:bob WRITE orders")
    time.sleep(3)
    admin.delete_topics(["temp"])
    time.sleep(3)
    admin.create_topics([NewTopic("temp", 1, 3)])
    step("temp deleted and re-created (1 partition, RF 3): a new topic id")
    time.sleep(3)
    admin.alter_partition_reassignments({TopicPartition("orders", 0): [3, 1], TopicPartition("orders", 1): [1, 2, 3]})
    step("reassigned orders-0 to [3, 1], orders-1 to [1, 2, 3]")
    time.sleep(6)
    admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "orders", configs={"retention.ms": "60000"})])
    admin.delete_acls([ACLFilter("User:bob", None, ACLOperation.ANY, ACLPermissionType.ANY,
                                 ResourcePatternFilter(ResourceType.TOPIC, "orders", ACLResourcePatternType.LITERAL))])
    step("orders retention.ms=60000; User:bob's ACL deleted")
    ksh("kill", nodes[2])
    step("node 3 killed (SIGKILL): fenced after the session timeout, its ISR memberships shrink")
    time.sleep(20)
    ksh("start", nodes[2])
    step("node 3 started again: unfenced, back in the ISRs")
    time.sleep(15)


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="kseg-churn-"))
    nodes = [work / f"node{i}" for i in (1, 2, 3)]
    ports = [int(ksh("free-port").split()[0]) + 10 * i for i in range(3)]
    voters = ",".join(f"{i}@127.0.0.1:{p + 1}" for i, p in zip((1, 2, 3), ports, strict=True))
    try:
        for i, (node, port) in enumerate(zip(nodes, ports, strict=True), start=1):
            ksh("format", node, i, port, voters, *EXTRA)
        for node in nodes:
            ksh("start", node, "--no-wait")
        for node in nodes:
            ksh("wait", node)
        step(f"3 nodes up (voters {voters})")
        admin = KafkaAdminClient(bootstrap_servers=[f"127.0.0.1:{p}" for p in ports], request_timeout_ms=30000)
        churn(admin, nodes)
        admin.close()
    finally:
        ksh("stop", *nodes)
        step("all three stopped (SIGTERM, controlled shutdown)")
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    shutil.copytree(nodes[0] / "data" / "__cluster_metadata-0", OUT / "__cluster_metadata-0")
    shutil.copy(nodes[0] / "data" / "meta.properties", OUT / "meta.properties")
    _provenance(voters)
    shutil.rmtree(work)


def _provenance(voters: str) -> None:
    files = sorted(p for p in OUT.rglob("*") if p.is_file())
    sums = "\n".join(f"    {hashlib.sha256(p.read_bytes()).hexdigest()}  {p.relative_to(OUT)}" for p in files)
    (OUT / "PROVENANCE.md").write_text(f"""# A real 3-node Kafka 4.3.0 quorum's metadata under churn

Made by `tools/make_metadata_churn_fixture.py` (its docstring says how to run it again); a new run gives other
bytes (times, ids), the same structure. Three combined broker+controller nodes on 127.0.0.1
(`../shared/kafka/kafka.sh`, Kafka 4.3.0, commit a9ce3221537b8653448750697915607dc7936cf3), voters {voters},
with {', '.join(EXTRA)}. The admin client is kafka-python.

What happened, in order:

{chr(10).join('    ' + s for s in STEPS)}

Kept: node 1's `__cluster_metadata-0` (log, snapshots, quorum-state; indexes as the clean stop trimmed them) and
its `meta.properties`; no partition directories. Nothing is wrong with these files: they are the reference for
the snapshot proof (tests/metadata/test_snapshot_proof.py) and Kafka's own replay
(tests/metadata/test_replay_vs_kafka.py), which pick up every `fixtures/**/__cluster_metadata-0`.

sha256:

{sums}
""")


if __name__ == "__main__":
    main()
