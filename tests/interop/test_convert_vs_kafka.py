"""kseg convert against Apache Kafka's own record code.

Sources are written by Kafka's ``MemoryRecordsBuilder`` (every input of
``interop_support.matrix_cases()``: each magic x codec x timestamp type,
transactions with markers, sequences that wrap, V0/V1/V2 batches mixed in one
file as after a format upgrade, delete horizons, Java-overflow offsets).  kseg
converts them, and Kafka's reader must then:

* accept every converted file whole (``ensureValid()`` of every batch and
  record, no bytes left over) -- for every target magic x codec;
* see the same records: offsets, keys and values always; timestamps where the
  target holds them (V0: -1); headers and producer fields (id, epoch, each
  record's sequence, transactional and control flags, markers) at magic 2;
  every batch in the target magic and codec (control batches keep theirs);
* for the conversions Kafka itself performs -- ``RecordsUtil.downConvert``
  (V2 -> V1/V0, one message set per batch), ``LogValidator`` (a V1 wrapper ->
  one V2 batch) and the cleaner's ``buildRetainedRecordsInto`` (V2 -> V2) --
  see exactly what Kafka's builder makes from the same records: the same bytes
  when uncompressed, the same batches and records otherwise.

Round trips V2 -> V1 -> V2 and V1 -> V2 -> V1 keep what the narrower format
holds.  Two JVM starts for the module: one writes and reads the sources, one
writes the expected files and reads and validates every output.
"""

from __future__ import annotations

import pytest
from interop_support import CODECS, matrix_cases
from oracle import make_batch, make_record

from kseg.format.compression import codec_id
from kseg.ops.convert.run import Target, convert_path

NAME = "00000000000000000000.log"
CASES = matrix_cases()
TARGETS = [(m, c) for m in (0, 1, 2) for c in CODECS if not (m < 2 and c == "zstd")] + [(2, None)]
#: every target for these; the few below for all other cases (keeps the JVM's reading modest)
FULL = [
    "mixed-magics", "txn-gzip", "txn-none", "sequence-wrap", "extremes", "single-records",
    "java-arithmetic", "marker-only", "m0-lz4-CreateTime", "m1-gzip-LogAppendTime", "m2-snappy-LogAppendTime",
]
FEW = [(0, "none"), (1, "gzip"), (2, "lz4"), (2, None)]
#: sources whose conversion Kafka itself performs, and the targets checked against Kafka's builder
KAFKA_PATHS = {
    "m2-lz4-LogAppendTime": [(1, "none"), (0, "none"), (2, "none"), (1, "gzip"), (2, "snappy")],
    "m2-zstd-CreateTime": [(1, "none"), (0, "none"), (2, "none"), (0, "lz4")],
    "m1-gzip-CreateTime": [(2, "none"), (0, "none"), (2, "zstd")],
    "m1-snappy-LogAppendTime": [(2, "none"), (0, "gzip")],
    "mixed-magics": [(2, "none")],
}


def refused_by_kafka(case: str, magic: int, codec: str | None) -> bool:
    """Keeping a zstd batch's codec below magic 2 is what Kafka refuses ("Down-conversion of zstandard...")."""
    return magic < 2 and codec is None and any(b.get("codec") == "zstd" for b in CASES[case] if not _marker(b))


def _marker(batch: dict) -> bool:
    return batch.get("end_txn_marker") is not None


def conversions() -> list[tuple[str, int, str | None]]:
    plan = [(case, m, c) for case in CASES for (m, c) in (TARGETS if case in FULL else FEW)]
    return [(case, m, c) for case, m, c in plan if not refused_by_kafka(case, m, c)]


def target_for(magic: int, codec: str | None) -> Target:
    return Target(magic, None if codec is None else codec_id(codec), drop_control=True, drop_headers=True)


# -- what Kafka reports --------------------------------------------------------------------


def record_rows(read: dict) -> list[dict]:
    """Every record with the batch fields that belong to it, as Kafka's reader reports them."""
    rows = []
    for batch in read["batches"]:
        for r in batch["records"]:
            rows.append(
                {
                    "offset": r["offset"],
                    "key": r["key"],
                    "value": r["value"],
                    "timestamp": r["timestamp"],
                    "timestampType": batch["timestampType"],
                    "headers": r["headers"],
                    "producerId": batch["producerId"],
                    "producerEpoch": batch["producerEpoch"],
                    "sequence": r["sequence"],
                    "isTransactional": batch["isTransactional"],
                    "isControlBatch": batch["isControlBatch"],
                    "control": r.get("control"),
                }
            )
    return rows


def expected_rows(source: list[dict], magic: int) -> list[dict]:
    """What the target format holds of the source records (Kafka's rules, reference §5)."""
    rows = []
    for row in source:
        if magic < 2 and row["isControlBatch"]:
            continue  # dropped with --drop-control, as down-conversion drops markers
        row = dict(row)
        if row["timestampType"] == "NoTimestampType":
            row["timestampType"] = "CreateTime"  # V0 up-converted: CreateTime, timestamp -1
        if magic < 2:
            row.update(headers=[], producerId=-1, producerEpoch=-1, sequence=-1, isTransactional=False)
        if magic == 0:
            row.update(timestamp=-1, timestampType="NoTimestampType")
        rows.append(row)
    return rows


def without_place(read: dict) -> list[dict]:
    """Batches without where they are and their checksums (compressed bytes differ between compressors)."""
    ignore = {"position", "sizeInBytes", "checksum"}
    out = []
    for batch in read["batches"]:
        kept = {k: v for k, v in batch.items() if k not in ignore}
        kept["records"] = [{k: v for k, v in r.items() if k not in ("sizeInBytes", "checksumOrNull")} for r in batch["records"]]
        out.append(kept)
    return out


# -- what Kafka's own conversions build --------------------------------------------------


def as_records(batch: dict, headers: bool) -> list[dict]:
    return [
        make_record(r["offset"], r["timestamp"], r["key"], r["value"], r["headers"] if headers else [])
        for r in batch["records"]
    ]


def kafka_conversion(case: str, read: dict, magic: int, codec: str) -> list[dict]:
    """The BATCH dicts Kafka's builder gets when Kafka converts this source (one per source batch).

    ``RecordsUtil.convertRecordBatch``: same timestamp type, LogAppendTime -> the batch max timestamp as
    log-append time, base offset of the first record, headers ignored below V2.  ``LogValidator`` (a legacy
    wrapper -> V2) and ``buildRetainedRecordsInto`` (V2 -> V2) build the same way at magic 2, the latter
    keeping the producer fields, base offset and leader epoch.  For mixed-magics the two V0 messages
    at the start are one produce request's worth: one V2 batch (see kseg.ops.convert.batches).
    """
    batches = []
    for batch in read["batches"]:
        fields = {"magic": magic, "codec": codec}
        if magic > 0 or batch["timestampType"] == "LogAppendTime":
            fields["timestamp_type"] = "LogAppendTime" if batch["timestampType"] == "LogAppendTime" else "CreateTime"
        if batch["timestampType"] == "LogAppendTime":
            fields["log_append_time"] = batch["maxTimestamp"]
        if magic == 2 and batch["magic"] == 2:
            fields.update(
                base_offset=batch["baseOffset"],
                producer_id=batch["producerId"],
                producer_epoch=batch["producerEpoch"],
                base_sequence=batch["baseSequence"],
                partition_leader_epoch=batch["partitionLeaderEpoch"],
            )
        batches.append(make_batch(as_records(batch, headers=magic == 2), **fields))
    if case == "mixed-magics":  # V0 uncompressed messages 0 and 1 are packed into one V2 batch
        first, second = batches[0], batches[1]
        assert [r["offset"] for r in first["records"] + second["records"]] == [0, 1]
        batches[:2] = [make_batch(first["records"] + second["records"], magic=2, codec=codec, timestamp_type="CreateTime")]
    return batches


# -- the test -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def converted(kafka_oracle, tmp_path_factory):
    """Sources written and read by Kafka; every conversion by kseg; outputs and expectations read by Kafka."""
    root = tmp_path_factory.mktemp("convert")
    sources = {case: root / "src" / f"{case}-0" for case in CASES}
    for directory in sources.values():
        directory.mkdir(parents=True)
    jobs = [{"op": "write", "out": d / NAME, "batches": CASES[c]} for c, d in sources.items()]
    jobs += [{"op": "read", "in": d / NAME} for d in sources.values()]
    results = kafka_oracle.run(jobs)
    assert all(r["ok"] for r in results[: len(sources)]), [r for r in results if not r["ok"]][:2]
    source_reads = dict(zip(CASES, results[len(sources) :]))

    outputs = {}
    for case, magic, codec in conversions():
        out = root / "out" / f"{case}-{magic}-{codec}"
        convert_path(sources[case], out, target_for(magic, codec))
        outputs[(case, magic, codec)] = out / NAME
    for case, targets in KAFKA_PATHS.items():
        for magic, codec in targets:
            if (case, magic, codec) not in outputs:
                out = root / "out" / f"{case}-{magic}-{codec}"
                convert_path(sources[case], out, target_for(magic, codec))
                outputs[(case, magic, codec)] = out / NAME
    expected = {
        (case, m, c): root / "kafka" / f"{case}-{m}-{c}.log" for case, targets in KAFKA_PATHS.items() for m, c in targets
    }
    (root / "kafka").mkdir()
    jobs = [
        {"op": "write", "out": path, "batches": kafka_conversion(case, source_reads[case], m, c)}
        for (case, m, c), path in expected.items()
    ]
    keys = list(outputs)
    jobs += [{"op": op, "in": outputs[k]} for k in keys for op in ("read", "validate")]
    jobs += [{"op": "read", "in": path} for path in expected.values()]
    results = kafka_oracle.run(jobs)
    written, rest = results[: len(expected)], results[len(expected) :]
    assert all(r["ok"] for r in written), [r for r in written if not r["ok"]][:2]
    reads = {k: (rest[2 * i], rest[2 * i + 1]) for i, k in enumerate(keys)}
    expected_reads = dict(zip(expected, rest[2 * len(keys) :]))
    return {
        "root": root,
        "sources": source_reads,
        "outputs": outputs,
        "reads": reads,
        "expected": expected,
        "expected_reads": expected_reads,
    }


def test_kafka_accepts_every_conversion_and_sees_the_same_records(converted):
    assert len(converted["reads"]) >= 200
    for (case, magic, codec), (read, validate) in converted["reads"].items():
        where = f"{case} -> magic {magic} {codec or '(codecs kept)'}"
        assert validate["all_valid"], (where, validate)
        assert read["error"] is None and read["valid_bytes"] == read["file_size"], where
        assert {b["magic"] for b in read["batches"]} <= {magic}, where
        if codec is not None:
            codecs = {b["compressionType"] for b in read["batches"] if not b["isControlBatch"]}
            assert codecs <= {codec}, where
        source = record_rows(converted["sources"][case])
        assert record_rows(read) == expected_rows(source, magic), where


def test_every_source_case_was_converted(converted):
    converted_cases = {case for case, _, _ in converted["reads"]}
    assert converted_cases == set(CASES)
    targets = {(m, c) for case, m, c in converted["reads"] if case == "mixed-magics"}
    assert targets == {(m, c) for m, c in TARGETS if not refused_by_kafka("mixed-magics", m, c)}


def test_what_kafka_converts_itself_is_what_kafkas_builder_makes(converted):
    for key, expected_path in converted["expected"].items():
        case, magic, codec = key
        ours = converted["outputs"][key]
        kafka_read, our_read = converted["expected_reads"][key], converted["reads"][key][0]
        if codec == "none":
            assert ours.read_bytes() == expected_path.read_bytes(), key
        else:
            assert without_place(our_read) == without_place(kafka_read), key
        assert len(our_read["batches"]) == len(kafka_read["batches"]), key


def test_split_batches_keep_every_records_sequence(converted, kafka_oracle, tmp_path):
    """V2 batches split by --max-message-bytes: Kafka sees each record with its old sequence and producer."""
    jobs, outs, limits = [], {}, {}
    for case in ("sequence-wrap", "txn-none", "m2-none-CreateTime", "extremes"):
        sizes = [b["sizeInBytes"] for b in converted["sources"][case]["batches"] if (b["countOrNull"] or 0) > 1]
        limits[case] = max(sizes) - 1  # the largest multi-record batch must be split
        out = tmp_path / case
        report = convert_path(converted["root"] / "src" / f"{case}-0", out, Target(2, max_message_bytes=limits[case]))
        assert report.totals().split >= 1 and report.totals().batches_out > report.totals().batches_in, case
        outs[case] = out / NAME
        jobs += [{"op": "read", "in": out / NAME}, {"op": "validate", "in": out / NAME}]
    results = kafka_oracle.run(jobs)
    for i, case in enumerate(outs):
        read, validate = results[2 * i], results[2 * i + 1]
        assert validate["all_valid"], case
        assert record_rows(read) == record_rows(converted["sources"][case]), case
        several = [b for b in read["batches"] if (b["countOrNull"] or 0) > 1]
        assert all(b["sizeInBytes"] <= limits[case] for b in several), case


def test_round_trips_keep_what_the_narrower_format_holds(converted, kafka_oracle, tmp_path):
    """V2 -> V1 -> V2 and V1 -> V2 -> V1, read by Kafka at the end."""
    src_root = converted["root"] / "src"
    trips = {
        "v2-v1-v2": ("m2-gzip-LogAppendTime", [(1, "gzip"), (2, "gzip")]),
        "v2-v1-v2-none": ("txn-none", [(1, None), (2, None)]),
        "v1-v2-v1": ("m1-lz4-CreateTime", [(2, None), (1, None)]),
        "v1-v2-v1-snappy": ("m1-snappy-LogAppendTime", [(2, "zstd"), (1, "snappy")]),
    }
    finals = {}
    for name, (case, steps) in trips.items():
        current = src_root / f"{case}-0"
        for i, (magic, codec) in enumerate(steps):
            out = tmp_path / name / str(i)
            convert_path(current, out, target_for(magic, codec))
            current = out
        finals[name] = current / NAME
    results = kafka_oracle.run([{"op": "read", "in": p} for p in finals.values()])
    for (name, (case, steps)), read in zip(trips.items(), results):
        narrowest = min(m for m, _ in steps)
        source = record_rows(converted["sources"][case])
        assert record_rows(read) == expected_rows(expected_rows(source, narrowest), steps[-1][0]), name
    # V1 -> V2 -> V1 with the codecs kept gives back Kafka's own batches: same wrappers, offsets, timestamps
    v1_back = results[list(trips).index("v1-v2-v1")]
    assert without_place(v1_back) == without_place(converted["sources"]["m1-lz4-CreateTime"])
