"""The differential run of kseg's loading model against Kafka 4.3.0's own loader (``LoadLogDir``).

Shared by ``test_load_vs_kafka.py``, ``load_diff_report.py`` and ``bench/bench_load_diff.py``:

* :func:`run` builds log directories from recipes (``tests/logdir_gen.py``): kseg writes the ``.log``
  files, one ``LoadLogDir --work`` JVM lets Kafka write the indexes, snapshots and epoch cache, Python
  writes the checkpoints and the shutdown marker and applies the damage; then ONE more ``LoadLogDir`` JVM
  loads every damaged log directory, and kseg's model predicts each in-process (``kseg.ops.triage.run``).
* :func:`compare` puts each partition's two answers side by side through :data:`FIELDS`, one row per
  compared field; a field kseg's JSON does not print (yet) is skipped, so new triage fields are compared
  as soon as they appear.  Log-directory fields are in :data:`LOGDIR_FIELDS`.

What ``LoadLogDir`` cannot know and how it is handled (docs/interop.md): the stray rename (a log without
``partition.metadata``) is done by LoadLogDir as the KRaft broker does it and compared as
``renamed_stray`` (and ``disposition``); the rename changes no file, so both sides' ``outcome`` is the
files' (docs/kafka-log-loading.md §13).  The other stray rule (a topic id the metadata image does not
know) needs the image: kseg states it as assumed, LoadLogDir keeps every partition with a topic id.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_TESTS = Path(__file__).resolve().parents[1]
for _p in (_TESTS, _TESTS / "interop"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import logdir_gen as gen  # noqa: E402
from kafka_storage import KafkaStorage  # noqa: E402

from kseg.ops.triage.run import DIR_OFFLINE, PartitionTriage, triage  # noqa: E402

DEFAULT_SEED = 20261127
CONSEQUENCE = {"log directory goes offline": "log_dir_offline", "broker stops": "broker_does_not_start"}
LOAD_OPTIONS = ("--no-kafka-log", "--no-files")


#: LoadLogDir hashes every file before and after each load, 10 MB preallocated indexes of failed loads
#: included: in one long JVM, C2 (no TieredStopAtLevel=1) runs that three times faster.  C2 would also
#: throw its preallocated exceptions (no message, no stack) once an exception is hot, so a message would
#: depend on how many log dirs came before: -XX:-OmitStackTraceInFastThrow keeps every message Kafka's.
BATCH_JVM_OPTIONS = ["-XX:+UseSerialGC", "-Xss4m", "-XX:-OmitStackTraceInFastThrow"]


class BatchStorage(KafkaStorage):
    """KafkaStorage for one long LoadLogDir run: full JIT, and Java's temporary copies under ``scratch``."""

    def __init__(self, storage: KafkaStorage, scratch: Path) -> None:
        super().__init__(storage.java, storage.classpath.split(os.pathsep), storage.timeout)
        self.scratch = scratch

    def _java(self, main: str, args: Sequence[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        tmp = Path(tempfile.mkdtemp(prefix="java-", dir=self.scratch))
        try:
            command = [self.java, *BATCH_JVM_OPTIONS, f"-Djava.io.tmpdir={tmp}", "-cp", self.classpath, main, *args]
            return subprocess.run(command, capture_output=True, text=True, timeout=self.timeout, cwd=cwd,
                                  encoding="utf-8", errors="surrogateescape")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def scratch_root(fallback: Path) -> Path:
    """A fresh directory on tmpfs (/dev/shm) when there is one: Kafka fsyncs every index, snapshot and
    checkpoint it writes, ten times slower than the whole load on a shared disk; else under ``fallback``."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK) and os.environ.get("KSEG_LOAD_DIFF_TMPFS", "1") != "0":
        return Path(tempfile.mkdtemp(prefix="kseg-load-diff-", dir=shm))
    fallback.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="kseg-load-diff-", dir=fallback))


@dataclass
class Case:
    """One log directory: its recipe, where it was built, and both answers."""

    recipe: gen.Recipe
    path: Path | None = None
    kafka: list[dict] = field(default_factory=list)  # LoadLogDir's partition objects
    kafka_dir: dict = field(default_factory=dict)  # LoadLogDir's {"type": "logdir"} object
    kseg: list[dict] = field(default_factory=list)  # triage's partition objects (+ "renamed_stray")
    kseg_dir: dict = field(default_factory=dict)  # the log-directory fields, as LOGDIR_FIELDS reads them
    unbuildable: str | None = None  # Kafka's first load of the undamaged dir failed: not a test input

    @property
    def name(self) -> str:
        return str(self.recipe["name"])


@dataclass
class Timing:
    generate: float = 0.0  # kseg encoder + Python damage, seconds
    kafka_write: float = 0.0  # LoadLogDir writing the healthy state
    kafka_load: float = 0.0  # LoadLogDir on the damaged dirs
    kseg: float = 0.0  # kseg's model, in-process

    def as_dict(self) -> dict[str, float]:
        return {k: round(v, 2) for k, v in vars(self).items()}


def recipes(seed: int, n: int, prefix: str = "ld") -> list[gen.Recipe]:
    """``n`` recipes; recipe ``i`` comes from ``Random(f"{seed}:{i}")`` alone, so any one replays alone."""
    return [gen.random_recipe(random.Random(f"{seed}:{i}"), f"{prefix}-{i:05d}") for i in range(n)]


def _relative(text: str | None, logdir: Path) -> str | None:
    """kseg's absolute paths made relative to the log dir's parent, as LoadLogDir prints Kafka's."""
    if text is None:
        return None
    for parent in {str(logdir.parent.absolute()), os.path.realpath(logdir.parent)}:
        text = text.replace(parent + os.sep, "")
    return text


def kseg_answers(case: Case) -> None:
    """kseg's model on one log directory, in-process (``kseg.ops.triage.run``)."""
    assert case.path is not None
    result = triage([case.path])
    case.kseg = [kseg_partition(p, case.path) for p in result.partitions]
    pred = result.log_dirs[0].prediction
    reads = pred.checkpoints
    # replication-offset-checkpoint is read by ReplicaManager after the load, which LoadLogDir does not run:
    # an offline log dir that only its read causes is left out of this comparison (docs/interop.md).
    offline = ((pred.error is not None and pred.error.consequence == DIR_OFFLINE)
               or any(r.reports_offline for n, r in reads.items() if n != "replication-offset-checkpoint")
               or any(p.error is not None and p.error.consequence == DIR_OFFLINE for p in pred.partitions))
    effect = "broker_does_not_start" if pred.stops_broker else "log_dir_offline" if offline else None
    case.kseg_dir = {
        "broker_effect": effect,
        "dir_error": None if pred.error is None else [pred.error.exception, _relative(pred.error.message, case.path)],
        "recovery_point_checkpoint_error": _problem(reads.get("recovery-point-offset-checkpoint"), case.path),
        "log_start_offset_checkpoint_error": _problem(reads.get("log-start-offset-checkpoint"), case.path),
    }


def _problem(read: Any, logdir: Path) -> str | None:
    return None if read is None or read.problem is None else _relative(read.problem, logdir)


def kseg_partition(part: PartitionTriage, logdir: Path) -> dict:
    """triage's JSON object of one partition, paths relative, plus what triage knows of the stray rename."""
    obj = part.as_json()
    if obj.get("error"):
        obj["error"] = {k: _relative(v, logdir) for k, v in obj["error"].items()}
    obj["dir"] = Path(str(obj["path"])).name
    obj["renamed_stray"] = part.stray_rename is not None
    return obj


# -- the fields compared ----------------------------------------------------------------------------------


def _error(obj: dict) -> Any:
    error = obj.get("error")
    return None if not error else [error["exception"], error["message"]]


def _kseg_effect(s: dict) -> Any:
    return CONSEQUENCE.get(s["consequence"]) if s.get("consequence") else None


def _names(s: dict, key: str) -> list[str]:
    """File names as LoadLogDir lists them: inside the partition directory, sorted (kseg's may carry the
    directory, relative to the log dir)."""
    return sorted(str(name).rsplit("/", 1)[-1] for name in s[key])


Getter = Callable[[dict], Any]

#: field -> (Kafka's value from LoadLogDir's object, kseg's value from triage's object, kseg key that must be
#: present for the field to be compared).  Extend here when triage prints more.
FIELDS: dict[str, tuple[Getter, Getter, str]] = {
    "outcome": (lambda k: k["outcome"], lambda s: s["outcome"], "outcome"),
    "log_start_offset": (lambda k: k["log_start_offset"], lambda s: s["log_start_offset"], "log_start_offset"),
    "log_end_offset": (lambda k: k["log_end_offset"], lambda s: s["log_end_offset"], "log_end_offset"),
    "truncated_bytes": (lambda k: k["truncated_bytes"], lambda s: s["truncated_bytes"], "truncated_bytes"),
    "deleted_segments": (lambda k: k["deleted_segments"], lambda s: s["deleted_segments"], "deleted_segments"),
    "lost_offsets": (lambda k: k["lost_offsets"], lambda s: s["lost_offsets"], "lost_offsets"),
    "error": (_error, _error, "error"),
    "leader_epochs": (lambda k: k["leader_epochs"], lambda s: s["leader_epochs"], "leader_epochs"),
    "broker_effect": (lambda k: k["broker_effect"], _kseg_effect, "consequence"),
    "renamed_stray": (lambda k: k["disposition"] == "renamed_stray", lambda s: s["renamed_stray"], "renamed_stray"),
    "disposition": (lambda k: k["disposition"], lambda s: s["disposition"], "disposition"),
    "files_created": (lambda k: k["files_created"], lambda s: _names(s, "files_created"), "files_created"),
    "files_changed": (lambda k: k["files_changed"], lambda s: _names(s, "files_changed"), "files_changed"),
    "files_deleted": (lambda k: k["files_deleted"], lambda s: _names(s, "files_deleted"), "files_deleted"),
}

LOGDIR_FIELDS = ("broker_effect", "dir_error", "recovery_point_checkpoint_error", "log_start_offset_checkpoint_error")


def _kafka_dir_value(obj: dict, key: str) -> Any:
    value = obj.get(key)
    if key == "dir_error" and value:
        return [value["exception"], value["message"]]
    if key.endswith("checkpoint_error") and value:  # the IOException a KafkaStorageException wraps, as kseg reports it
        inner = value["causes"][-1] if value.get("causes") else value
        return f"{inner['exception']}: {inner['message']}"
    return value


@dataclass(frozen=True)
class Diff:
    """The fields where the two answers for one partition (or a log directory, ``dir`` = "") differ."""

    case: str
    dir: str
    fields: dict[str, tuple[Any, Any]]  # field -> (Kafka, kseg)

    def describe(self) -> str:
        return "; ".join(f"{f}: kafka={k!r} kseg={s!r}" for f, (k, s) in self.fields.items())


def compare(case: Case) -> list[Diff]:
    """Every disagreement of one case: per partition through FIELDS, then the log directory's."""
    diffs = []
    kafka = {k["dir"]: k for k in case.kafka}
    kseg = {s["dir"]: s for s in case.kseg}
    for name in sorted(set(kafka) | set(kseg)):
        k, s = kafka.get(name), kseg.get(name)
        if k is None or s is None:
            diffs.append(Diff(case.name, name, {"present": (k is not None, s is not None)}))
            continue
        fields = {}
        for f, (kget, sget, key) in FIELDS.items():
            if key in s:
                kv, sv = kget(k), sget(s)
                if kv != sv:
                    fields[f] = (kv, sv)
        if fields:
            diffs.append(Diff(case.name, name, fields))
    fields = {}
    for key in LOGDIR_FIELDS:
        kv, sv = _kafka_dir_value(case.kafka_dir, key), case.kseg_dir.get(key)
        if kv != sv:
            fields[key] = (kv, sv)
    if fields:
        diffs.append(Diff(case.name, "", fields))
    return diffs


# -- the run ----------------------------------------------------------------------------------------------


def build(storage: KafkaStorage, cases: Sequence[Case], root: Path, timing: Timing) -> None:
    """Steps 1-3 of logdir_gen for every case: pristine logs, Kafka's healthy state (one JVM), damage."""
    pristine, healthy = root / "pristine", root / "healthy"
    t = time.perf_counter()
    for case in cases:
        gen.write_logs(case.recipe, pristine / case.name)
    timing.generate += time.perf_counter() - t
    t = time.perf_counter()
    groups = storage.load([pristine / c.name for c in cases], *LOAD_OPTIONS, "--no-stray-check", "--work", str(healthy))
    timing.kafka_write += time.perf_counter() - t
    t = time.perf_counter()
    for case, objs in zip(cases, groups):
        parts = {(o["topic"], o["partition"]): o for o in objs if o.get("type") == "partition"}
        failed = [o for o in parts.values() if o["error"]]
        if failed:
            case.unbuildable = f"{failed[0]['dir']}: {failed[0]['error']['exception']}: {failed[0]['error']['message']}"
            continue
        case.path = gen.finish(case.recipe, healthy / case.name, parts)
    shutil.rmtree(pristine, ignore_errors=True)
    timing.generate += time.perf_counter() - t


def run(storage: KafkaStorage, recipes_: Sequence[gen.Recipe], root: Path, timing: Timing | None = None) -> list[Case]:
    """Build, then ONE LoadLogDir JVM over every damaged log dir, then kseg in-process on each."""
    timing = timing if timing is not None else Timing()
    root.mkdir(parents=True, exist_ok=True)
    storage = storage if isinstance(storage, BatchStorage) else BatchStorage(storage, root)
    cases = [Case(r) for r in recipes_]
    build(storage, cases, root, timing)
    ready = [c for c in cases if c.path is not None]
    t = time.perf_counter()
    groups = storage.load([c.path for c in ready if c.path is not None], *LOAD_OPTIONS)
    timing.kafka_load += time.perf_counter() - t
    t = time.perf_counter()
    for case, objs in zip(ready, groups):
        case.kafka = [o for o in objs if o.get("type") == "partition"]
        case.kafka_dir = objs[-1]
        kseg_answers(case)
    timing.kseg += time.perf_counter() - t
    return cases


def signature(diff: Diff) -> tuple[str, ...]:
    """A coarse group for the report: which fields differ, and the outcomes / exceptions involved."""
    parts = sorted(diff.fields)
    detail = []
    for f in ("outcome", "error", "broker_effect", "dir_error"):
        if f in diff.fields:
            k, s = diff.fields[f]
            if f in ("error", "dir_error"):
                k = k[0] if k else None
                s = s[0] if s else None
            detail.append(f"{f}:{k}/{s}")
    return (",".join(parts), *detail)


def tree_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "")
    return int(value) if value.strip() else default
