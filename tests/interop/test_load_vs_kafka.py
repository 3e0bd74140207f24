"""kseg's loading model against Kafka 4.3.0's own loader, on random damaged log directories.

``kseg triage`` (and verify, ``recover --dry-run``) predict what the next broker start does to each
partition from one model (kseg/recovery/loading, docs/kafka-log-loading.md).  Here Kafka answers too:
``LoadLogDir`` (../shared/oracle) runs ``UnifiedLog.create`` and LogManager's steps on a copy of each log
directory.  The log directories come from ``tests/logdir_gen.py`` (recipes from a seeded
``random.Random``; Kafka itself writes their indexes, snapshots and epoch caches before the damage), and
``load_diff.py`` builds them, runs ONE LoadLogDir JVM over all of them and kseg's model in-process, and
compares every partition through ``load_diff.FIELDS``.

* ``test_random_log_dirs_load_as_kafka_loads_them``: ``KSEG_LOAD_DIFF_N`` log dirs (CI default 500) from
  ``KSEG_LOAD_DIFF_SEED`` (printed; the default is fixed).  Every disagreement must be one of
  :data:`KNOWN_DISAGREEMENTS`; a new one fails with the seed and the recipe to replay
  (``python -m tests.interop.load_diff_report --recipe '<recipe>'``).  A sample also goes through the real
  CLI (``kseg triage --format json``), which must print what the in-process call returned.
* ``test_saved_fixtures_load_as_pinned``: every fixture of ``fixtures/load-vs-kafka/`` (a minimised
  disagreement, PROVENANCE.md beside it) still gets Kafka's saved verdict from Kafka, and kseg differs from
  it in exactly the fields its KNOWN_DISAGREEMENTS entry names -- in none when it has no entry.  Fixing a
  kind therefore fails this test until its entry is removed; it can never pass silently.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import load_diff as ld
import logdir_gen as gen
import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures" / "load-vs-kafka"
N = ld.env_int("KSEG_LOAD_DIFF_N", 500)
SEED = ld.env_int("KSEG_LOAD_DIFF_SEED", ld.DEFAULT_SEED)
CLI_SAMPLE = 6


def _kafka_error(diff: ld.Diff) -> list[str] | None:
    return diff.fields["error"][0] if "error" in diff.fields else None


@dataclass(frozen=True)
class Known:
    """A kind of disagreement kseg does not fix yet: its fixture, the fields that differ there, and the
    classifier that recognises it in a random run."""

    fixture: str  # fixtures/load-vs-kafka/<fixture>
    fields: frozenset[str]  # exactly the fields that differ on the fixture ("dir." for log-directory fields)
    matches: Callable[[ld.Case, ld.Diff], bool]
    why: str


def _ops(case: ld.Case, diff: ld.Diff) -> set[str]:
    """The damage operators applied to the diff's partition (log-directory operators included)."""
    ops = {op["op"] for op in case.recipe["ops"]}
    for part in case.recipe["partitions"]:
        if diff.dir.startswith(f"{part['topic']}-{part['partition']}"):
            ops |= {op["op"] for op in part["ops"]}
    return ops


def _kafka(case: ld.Case, diff: ld.Diff) -> dict:
    return next(k for k in case.kafka if k["dir"] == diff.dir)


def _kafka_failure(case: ld.Case, diff: ld.Diff, *texts: str) -> bool:
    """Kafka's load of this partition threw, kseg's did not, and Kafka's exception (message or frames) says one of ``texts``."""
    if "error" not in diff.fields or not diff.dir:
        return False
    error = _kafka(case, diff)["error"]
    if error is None or diff.fields["error"][1] is not None:
        return False
    said = " ".join([error["exception"], error["message"] or "", *error.get("frames", [])])
    return any(t in said for t in texts)


def _only(diff: ld.Diff, *fields: str) -> bool:
    return bool(diff.fields) and set(diff.fields) <= set(fields)


def _kafka_throws_on_batch(case: ld.Case, diff: ld.Diff, texts: tuple[str, ...]) -> bool:
    """A damaged .log and Kafka's load throws one of ``texts`` where kseg predicts no exception or another."""
    if not LOG_DAMAGE & _ops(case, diff) or "error" not in diff.fields or not diff.dir:
        return False
    kafka, kseg = diff.fields["error"]
    return kafka is not None and any(t in f"{kafka[0]} {kafka[1]}" for t in texts) and kseg != kafka


#: the fields that differ when one side's load throws and the other's does not
LOAD_FAILS = frozenset({"broker_effect", "dir.broker_effect", "disposition", "error", "leader_epochs", "log_end_offset",
                        "log_start_offset", "outcome"})
FILE_FIELDS = ("files_created", "files_changed", "files_deleted", "disposition")


def _recreated_at_log_start(case: ld.Case, diff: ld.Diff) -> bool:
    """kseg's only extra changed file is the empty .log at Kafka's log start, recreated at the same base (R8.2)."""
    kafka, kseg = diff.fields["files_changed"]
    start = _kafka(case, diff)["log_start_offset"]
    return start is not None and set(kseg) - set(kafka) == {f"{start:020d}.log"} and set(kafka) <= set(kseg)


LOG_DAMAGE = {"tear", "zero", "zero_page", "hole", "flip", "length", "swap"}

KNOWN_DISAGREEMENTS: dict[str, Known] = {
    "checkpoint-unreadable-stops-broker": Known(
        "checkpoint-unreadable-stops-broker", frozenset({"broker_effect", "dir.broker_effect", "error", "outcome"}),
        lambda case, diff: _kafka_failure(case, diff, "is already offline due to a previous IO exception")
        or (not diff.dir and diff.fields.get("broker_effect") == ("broker_does_not_start", "log_dir_offline")
            and bool(case.kafka_dir.get("recovery_point_checkpoint_error")
                     or case.kafka_dir.get("log_start_offset_checkpoint_error"))),
        "an offset checkpoint that throws an IOException (wrong entry count, bad version, unparsable line) puts the "
        "log dir in LogDirFailureChannel; LoadLogDir then closes each log, and UnifiedLog.close goes through "
        "LocalLog.maybeHandleIOException, which throws KafkaStorageException 'already offline': every partition "
        "of the dir 'fails' in the driver. A broker start does not close (it loads every partition, then halts: "
        "R9.4, proved on a real broker); kseg predicts that start -- the loads, the dir offline, no close (R4.8)"),
    "kafka-throws-on-damaged-batch": Known(
        "kafka-throws-on-damaged-batch", LOAD_FAILS,
        lambda case, diff: _kafka_throws_on_batch(case, diff, (
            "CorruptRecordException", "SnappyIOException", "KafkaException", "InvalidRecordException",
            "Unknown compression type", "newLimit > capacity")),
        "a damaged batch that Kafka's load reads and throws on (CorruptRecordException, a codec's exception "
        "wrapped in KafkaException, IllegalArgumentException from a buffer limit): kseg predicts a load without "
        "an error, or another exception"),
    "jdk-exception-on-damaged-batch": Known(
        "jdk-exception-on-damaged-batch",
        frozenset({*LOAD_FAILS, "files_changed", "files_created"}),
        lambda case, diff: _kafka_throws_on_batch(case, diff, (
            "IndexOutOfBoundsException", "NoSuchElementException", "BufferUnderflowException")),
        "a damaged batch on which Kafka's load throws a JDK exception without a message "
        "(IndexOutOfBoundsException from LegacyRecord.keySize in a magic 1 wrapper whose length field is "
        "wrong, NoSuchElementException) that neither LogSegment.recover nor LogManager handles: the broker "
        "stops; kseg predicts a load without an error"),
    "segment-recreated-at-same-base": Known(
        "segment-recreated-at-same-base", frozenset({"files_changed"}),
        lambda case, diff: _only(diff, "files_changed") and _recreated_at_log_start(case, diff),
        "every segment goes (the log start is past the end, R8.2) and the new active segment is created at the "
        "base of a deleted empty one: kseg lists that .log as changed, LoadLogDir sees the same (empty) file "
        "before and after"),
    "clean-start-damaged-tail-log-end": Known(
        "clean-start-damaged-tail-log-end", frozenset({"deleted_segments", "files_created", "files_deleted", "leader_epochs", "log_end_offset", "lost_offsets", "outcome"}),
        lambda case, diff: case.recipe["clean"] and bool((LOG_DAMAGE | {"index", "timeindex"}) & _ops(case, diff))
        and "error" not in diff.fields and bool({"log_end_offset", "deleted_segments"} & set(diff.fields))
        and _only(diff, "log_end_offset", "lost_offsets", "leader_epochs", "deleted_segments", "outcome",
                  "truncated_bytes", *FILE_FIELDS),
        "a clean start with a damaged active segment or .index: Kafka's readNextOffset (R5.5) gives a "
        "different log end than kseg's (or Kafka recovers and cuts the segment where kseg does not), and with "
        "it what R8.2 deletes"),
}


def _dir_effect_follows(case: ld.Case, diff: ld.Diff) -> str | None:
    """A log directory's broker_effect that differs only because a partition's does (that partition's kind)."""
    if diff.dir or set(diff.fields) != {"broker_effect"}:
        return None
    for other in ld.compare(case):
        if other.dir and "broker_effect" in other.fields:
            kind = next((k for k, known in KNOWN_DISAGREEMENTS.items() if known.matches(case, other)), None)
            if kind is not None and other.fields["broker_effect"][0] == diff.fields["broker_effect"][0]:
                return kind
    return None


def classify(case: ld.Case, diff: ld.Diff) -> str | None:
    """The known kind that explains ``diff``, or None (a new disagreement)."""
    found = _single(case, diff) or _dir_effect_follows(case, diff)
    return found or _two_kinds(case, diff)


def _single(case: ld.Case, diff: ld.Diff) -> str | None:
    return next((kind for kind, known in KNOWN_DISAGREEMENTS.items() if known.matches(case, diff)), None)


def _two_kinds(case: ld.Case, diff: ld.Diff) -> str | None:
    """Two known kinds in one partition (a swap in a -delete dir, ...): the fields split between them,
    each part recognised by its own classifier.  Named ``kind+kind``."""
    names = sorted(diff.fields)
    if len(names) > 4:
        return None
    for mask in range(1, (1 << len(names)) - 1):
        first = {f: diff.fields[f] for i, f in enumerate(names) if mask >> i & 1}
        rest = {f: v for f, v in diff.fields.items() if f not in first}
        a, b = _single(case, ld.Diff(diff.case, diff.dir, first)), _single(case, ld.Diff(diff.case, diff.dir, rest))
        if a and b:
            return f"{a}+{b}"
    return None


def _fields(diffs: list[ld.Diff]) -> set[str]:
    return {f if d.dir else f"dir.{f}" for d in diffs for f in d.fields}


def _replay(case: ld.Case) -> str:
    return f"python -m tests.interop.load_diff_report --recipe '{gen.describe(case.recipe)}'"


def _coverage(recipes: list[gen.Recipe]) -> Counter[str]:
    """What the generated log dirs hold: magics, codecs, transactions, shutdowns, operators."""
    seen: Counter[str] = Counter()
    for recipe in recipes:
        seen["clean" if recipe["clean"] else "unclean"] += 1
        seen.update(f"op:{op['op']}" for op in recipe["ops"])
        for part in recipe["partitions"]:
            seen.update(f"op:{op['op']}" for op in part["ops"])
            seen["real" if "real" in part else "generated"] += 1
            seen[f"segments:{min(len(part['segments']), 3)}"] += 1
            for spec in (s for seg in part["segments"] for s in seg):
                if "marker" in spec:
                    seen[f"marker:{spec['marker']}"] += 1
                    continue
                seen[f"magic:{spec['magic']}"] += 1
                seen[f"codec:{spec['codec']}"] += 1
                seen["txn" if spec.get("txn") else "idempotent" if "pid" in spec else "plain"] += 1
    return seen


def test_generator_covers_what_the_loader_meets():
    """The default run's recipes hold every magic, codec, operator, shutdown kind and transactions."""
    seen = _coverage(ld.recipes(SEED, max(N, 200)))
    wanted = {f"magic:{m}" for m in (0, 1, 2)} | {f"codec:{c}" for c in gen.CODECS}
    wanted |= {f"op:{op}" for op in [*gen.PARTITION_OPS, *gen.LOGDIR_OPS]}
    wanted |= {"clean", "unclean", "txn", "idempotent", "plain", "marker:COMMIT", "marker:ABORT", "segments:3", "real"}
    assert wanted <= set(seen), sorted(wanted - set(seen))


def _cli_json(path: Path) -> tuple[int, list[dict]]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-m", "kseg", "triage", "--format", "json", str(path)],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, [json.loads(line) for line in proc.stdout.splitlines()]


def _cli_agrees(case: ld.Case) -> None:
    """The CLI prints, per partition, exactly the object the in-process call gave (same model, same bytes)."""
    assert case.path is not None
    code, objs = _cli_json(case.path)
    printed = {Path(o["path"]).name: o for o in objs if o["type"] == "partition"}
    in_process = {s["dir"]: {k: v for k, v in s.items() if k not in ("dir", "renamed_stray")} for s in case.kseg}
    for name, obj in in_process.items():
        got = dict(printed[name])
        if got.get("error"):
            got["error"] = {k: ld._relative(v, case.path) for k, v in got["error"].items()}
        assert got == obj, (case.name, name)
    assert set(printed) == set(in_process)
    [summary] = [o for o in objs if o["type"] == "summary"]
    assert code == summary["exit_code"]


def test_random_log_dirs_load_as_kafka_loads_them(kafka_storage, tmp_path, capsys):
    with capsys.disabled():  # the seed is printed on every run, captured or not
        print(f"\nload-vs-kafka: KSEG_LOAD_DIFF_SEED={SEED} KSEG_LOAD_DIFF_N={N}")
    timing = ld.Timing()
    root = ld.scratch_root(tmp_path)
    try:
        _random_run(kafka_storage, root, timing, capsys)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _random_run(kafka_storage, root: Path, timing: ld.Timing, capsys) -> None:
    cases = ld.run(kafka_storage, ld.recipes(SEED, N), root, timing)
    loaded = [c for c in cases if c.path is not None]
    partitions = sum(len(c.kafka) for c in loaded)
    print(f"load-vs-kafka: {len(loaded)} log dirs, {partitions} partitions, {timing.as_dict()}")
    assert len(loaded) >= N * 0.98, [c.unbuildable for c in cases if c.unbuildable][:5]
    outcomes = Counter(k["outcome"] for c in loaded for k in c.kafka)
    assert {"clean", "rebuilt", "truncated", "fails"} <= set(outcomes), outcomes

    found = [(case, diff, classify(case, diff)) for case in loaded for diff in ld.compare(case)]
    kinds = Counter(kind for _, _, kind in found)
    with capsys.disabled():
        print(f"load-vs-kafka: {len(found)} disagreements, by kind {dict(sorted(kinds.items(), key=str))}")
    new = [(case, diff) for case, diff, kind in found if kind is None]
    message = [f"{len(new)} disagreement(s) of no known kind (KSEG_LOAD_DIFF_SEED={SEED}, N={N}); first ones:"]
    for case, diff in new[:5]:
        message += [f"  {case.name} {diff.dir or '(log dir)'}: {diff.describe()}"[:1500], f"    replay: {_replay(case)}"]
    assert not new, "\n".join(message)

    sample = [c for c in loaded if ld.compare(c)][: CLI_SAMPLE // 2]
    sample += [c for c in loaded if c not in sample][: CLI_SAMPLE - len(sample)]
    for case in sample:
        _cli_agrees(case)


def _fixture_dirs() -> list[Path]:
    return sorted(p for p in FIXTURES.iterdir() if (p / "kafka-logs").is_dir()) if FIXTURES.is_dir() else []


def _kafka_view(objs: list[dict]) -> list[object]:
    """The compared fields of LoadLogDir's answer (not hashes or log lines, which vary with the clock)."""
    view: list[object] = []
    for obj in objs:
        if obj.get("type") == "partition":
            view.append((obj["dir"], {f: get(obj) for f, (get, _, _) in ld.FIELDS.items()}))
        else:
            view.append({f: ld._kafka_dir_value(obj, f) for f in ld.LOGDIR_FIELDS})
    return view


def test_known_disagreements_each_have_a_fixture():
    names = {p.name for p in _fixture_dirs()}
    for kind, known in KNOWN_DISAGREEMENTS.items():
        assert known.fixture in names, kind
        assert known.fields, kind


@pytest.mark.skipif(not _fixture_dirs(), reason="no fixtures/load-vs-kafka yet")
def test_saved_fixtures_load_as_pinned(kafka_storage):
    dirs = _fixture_dirs()
    groups = kafka_storage.load([d / "kafka-logs" for d in dirs], *ld.LOAD_OPTIONS)
    by_fixture = {k.fixture: kind for kind, k in KNOWN_DISAGREEMENTS.items()}
    for fixture, objs in zip(dirs, groups):
        saved = json.loads((fixture / "kafka.json").read_text())
        assert _kafka_view(objs) == _kafka_view(saved), f"{fixture.name}: Kafka's verdict is not the saved one"
        case = ld.Case(json.loads((fixture / "recipe.json").read_text()), fixture / "kafka-logs",
                       [o for o in objs if o.get("type") == "partition"], objs[-1])
        ld.kseg_answers(case)
        diffs = ld.compare(case)
        kind = by_fixture.get(fixture.name)
        expected = set(KNOWN_DISAGREEMENTS[kind].fields) if kind else set()
        assert _fields(diffs) == expected, (fixture.name, [d.describe() for d in diffs])
        if kind:
            assert all(classify(case, d) == kind for d in diffs), (fixture.name, kind)


def test_fixture_provenance_lists_every_file():
    """Each fixture's PROVENANCE.md lists exactly its files, with their sizes and sha256."""
    import hashlib
    import re

    for fixture in _fixture_dirs():
        doc = (fixture / "PROVENANCE.md").read_text()
        rows = re.findall(r"^\| `([^`]+)` \| (\d+) \| `([0-9a-f]{64})` \|$", doc, re.MULTILINE)
        on_disk = {str(p.relative_to(fixture)) for p in fixture.rglob("*") if p.is_file() and p.name != "PROVENANCE.md"}
        assert {name for name, _, _ in rows} == on_disk, fixture.name
        for name, size, digest in rows:
            data = (fixture / name).read_bytes()
            assert (len(data), hashlib.sha256(data).hexdigest()) == (int(size), digest), (fixture.name, name)
