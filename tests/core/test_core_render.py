"""The core's record rendering (``kseg._core.render_records``) writes exactly what the Python renderers write.

The reference is the pure path of ``kseg dump --deep-iteration``: ``TextRenderer.record_line`` over the
decoded records (every dialect and flag that changes a V2 record line) and ``JsonRenderer.record_json``
(every ``--payload``).  Compared byte for byte on batches Kafka's writer made (keys and values null,
empty, binary, UTF-8 with escapes and non-ASCII; headers; timestamps -1 and large; LogAppendTime;
offset gaps; producer sequences that wrap; compressed), damaged copies of them, every V2 batch of the
real corpus, and whole dumps of the golden fixtures and of damaged logs with the core and without it.
The core declines (``None``) exactly where the scanner does not read the batch whole; bytes that are
not UTF-8 are decoded with Java's replacement rules in both (``jvm_text.java_utf8`` is checked against
a JVM in tests/interop).
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from segments import corpus_logs, damaged, log_of

from kseg.format import RecordSpec, encode_batch, records_render, scan
from kseg.format.model import Record
from kseg.format.v2 import V2Batch
from kseg.ops.dump import BatchEvent, DumpOptions
from kseg.ops.dump.decode import decode_records
from kseg.ops.dump.dialect import dialect_for
from kseg.render.dump import JsonRenderer, Sink, TextRenderer

#: (print_data_log, skip_record_metadata, release): every combination that changes a V2 record line.
TEXT_CASES = [(p, s, v) for p in (False, True) for s in (False, True) for v in ("4.3", "4.2", "3.0")]
PAYLOADS = ("utf8", "hex", "base64")
CAP = 1 << 26


def _sink() -> Sink:
    return Sink(io.BytesIO(), io.BytesIO())


def text_renderer(print_data: bool, skip: bool, release: str, batch: V2Batch) -> TextRenderer:
    options = DumpOptions(deep_iteration=True, print_data_log=print_data, skip_record_metadata=skip,
                          dialect=dialect_for(release))
    renderer = TextRenderer(_sink(), options)
    renderer.handle(BatchEvent("x", batch, True))  # sets the timestamp label as the dump does
    return renderer


def _clean(batch: V2Batch) -> list[Record] | None:
    """The records when the one scanner reads the whole batch cleanly (what the core renders), else None."""
    if batch.scan(CAP) is None:
        return None
    found, err = decode_records(batch, CAP)
    return None if err is not None else found


def _with_core(core, call):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(records_render, "CORE", core)
        return call()


def assert_text_same(core, batch: V2Batch) -> int:
    """Every text dialect/flag: the core's bytes are the Python lines, or it declines for a reason."""
    rendered_batches = 0
    clean = _clean(batch)
    for print_data, skip, release in TEXT_CASES:
        renderer = text_renderer(print_data, skip, release, batch)
        style = renderer._core_style
        got = _with_core(core, lambda s=style: records_render.render_records(batch, s, CAP))
        if clean is None:
            assert got is None
            continue
        expected = "".join(renderer.record_line(r) + "\n" for r in clean).encode("utf-8", "surrogateescape")
        assert got is not None
        assert got[0] == expected, (print_data, skip, release)
        assert list(got[1]) == [r[0] for r in clean]
        rendered_batches += 1
    return rendered_batches


def assert_json_same(core, batch: V2Batch) -> int:
    rendered_batches = 0
    clean = _clean(batch)
    for payload in PAYLOADS:
        renderer = JsonRenderer(_sink(), DumpOptions(deep_iteration=True), payload)
        got = _with_core(core, lambda r=renderer: records_render.render_records(batch, r._core_style, CAP))
        if clean is None:
            assert got is None
            continue
        expected = ",".join(renderer.record_json(r) for r in clean).encode("utf-8", "surrogateescape")
        assert got is not None
        assert got[0] == expected, payload
        assert list(got[1]) == [r[0] for r in clean]
        rendered_batches += 1
    return rendered_batches


def assert_same(core, batch: V2Batch) -> int:
    return assert_text_same(core, batch) + assert_json_same(core, batch)


payload = st.one_of(
    st.none(),
    st.just(b""),
    st.binary(max_size=60),
    st.text(max_size=30).map(lambda t: t.encode("utf-8")),
    st.sampled_from([b'"\\\n\r\t\x08\x0c\x00\x1f\x7f', "é€😀".encode(), b"\xed\xa0\x80", b"\xc3", b"\xff"]),
)
header = st.tuples(st.one_of(st.text(max_size=8).map(lambda t: t.encode("utf-8")), st.binary(max_size=6)), payload)
record = st.tuples(payload, payload, st.lists(header, max_size=3), st.integers(0, 3), st.integers(-1, 2**40))


@settings(deadline=None, max_examples=120)
@given(
    st.lists(record, min_size=1, max_size=6),
    st.sampled_from([0, 5, 2**40, 2**62]),
    st.sampled_from([-1, 0, 2**31 - 3]),
    st.sampled_from(["none", "gzip"]),
    st.booleans(),
)
def test_written_batches(core, items, base, base_sequence, codec, log_append):
    specs, offset = [], base
    for key, value, headers, gap, ts in items:
        specs.append(RecordSpec(offset, ts, key, value, tuple(headers)))
        offset += 1 + gap
    producer = {} if base_sequence < 0 else {"producer_id": 7, "producer_epoch": 0, "base_sequence": base_sequence}
    data = encode_batch(specs, codec=codec, timestamp_type="LogAppendTime" if log_append else "CreateTime",
                        log_append_time=1_700_000_000_000 if log_append else -1, **producer)
    assert_same(core, V2Batch(data, 0))


@settings(deadline=None, max_examples=60)
@given(st.lists(record, min_size=1, max_size=4), st.integers(0, 2**32))
def test_damaged_batches(core, items, seed):
    specs = [RecordSpec(i, ts, k, v, tuple(h)) for i, (k, v, h, _, ts) in enumerate(items)]
    data = damaged(encode_batch(specs), seed)
    for item in scan.scan(data):
        if isinstance(item, V2Batch):
            assert_same(core, item)


#: Bytes where Java's UTF-8 decoding differs from Python's or is easy to get wrong (docs/dump.md).
ODD_BYTES = (0x00, 0x22, 0x5C, 0x0A, 0x7F, 0x80, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xED, 0xEF,
             0xF0, 0xF4, 0xF5, 0xF8, 0xFF)


def test_keys_payloads_and_header_keys_decode_as_java(core):
    """Every 1- and 2-byte string of the odd bytes, and 3-/4-byte ones, as key, payload and header key."""
    strings = [bytes([a]) for a in ODD_BYTES] + [bytes([a, b]) for a in ODD_BYTES for b in ODD_BYTES]
    strings += [bytes([a, b, c]) for a in (0xE0, 0xED, 0xEF, 0xF0, 0xF4) for b in (0x80, 0x9F, 0xA0, 0xBF, 0x41)
                for c in (0x80, 0xBF, 0x41)]
    strings += [s + bytes([d]) for s in strings[-75:] for d in (0x80, 0x41)]
    for at in range(0, len(strings), 200):
        part = strings[at : at + 200]
        specs = [RecordSpec(i, 1_700_000_000_000, k, k[::-1], ((k, k),)) for i, k in enumerate(part)]
        assert assert_same(core, V2Batch(encode_batch(specs), 0)) == len(TEXT_CASES) + len(PAYLOADS)


def _v2_batches(data: bytes) -> Iterator[V2Batch]:
    for item in scan.scan(data):
        if isinstance(item, V2Batch) and not item.is_control:
            yield item


def test_logs_and_damaged_logs(core):
    rendered = 0
    for seed in range(40):
        for data in (log_of(seed), damaged(log_of(seed), seed)):
            for batch in _v2_batches(data):
                rendered += assert_same(core, batch)
    assert rendered > 100


@pytest.mark.corpus
def test_every_v2_batch_of_the_real_corpus(core):
    rendered = batches = 0
    for path in corpus_logs():
        for batch in _v2_batches(path.read_bytes()):
            batches += 1
            rendered += assert_json_same(core, batch)
            if batches % 7 == 0:  # every text style too, on a seventh of them (time)
                rendered += assert_text_same(core, batch)
    assert batches > 1000
    assert rendered > batches


# --------------------------------------------------------------------------- whole dumps, both paths


def _dump(core, args: list[str], cwd: Path):
    from click.testing import CliRunner

    from kseg.cli import cli

    old = os.getcwd()
    os.chdir(cwd)
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(records_render, "CORE", core)
            result = CliRunner().invoke(cli, ["dump", *args], env={"COLUMNS": "100", "NO_COLOR": "1"},
                                        catch_exceptions=False)
    finally:
        os.chdir(old)
    return result.exit_code, result.stdout_bytes, result.stderr_bytes


class _Counting:
    """The core, counting the batches it rendered."""

    def __init__(self, core) -> None:
        self.core = core
        self.rendered = 0

    def render_records(self, *args):
        out = self.core.render_records(*args)
        self.rendered += out is not None
        return out

    def __getattr__(self, name):
        return getattr(self.core, name)


def _assert_dump_same(core, args: list[str], cwd: Path) -> int:
    counting = _Counting(core)
    assert _dump(counting, args, cwd) == _dump(None, args, cwd), args
    return counting.rendered


FLAG_SETS = [["--deep-iteration"], ["--print-data-log"], ["--print-data-log", "--skip-record-metadata"],
             ["--deep-iteration", "--skip-record-metadata"], ["--format", "json", "--deep-iteration"],
             ["--format", "json", "--deep-iteration", "--payload", "hex"]]


def test_golden_cases_print_the_same_with_and_without_the_core(core):
    """Every golden case of tests/test_cli_dump.py (which checks the goldens on whichever path runs)."""
    import test_cli_dump as goldens

    rendered = 0
    for version in goldens.GOLDEN_DIRS.values():
        for args, _ in goldens.CASES.values():
            rendered += _assert_dump_same(core, ["--kafka-version", version, *args], goldens.DUMP)
        for args, _ in goldens.JSON_CASES.values():
            rendered += _assert_dump_same(core, ["--format", "json", "--kafka-version", version, *args], goldens.DUMP)
    assert rendered > 20


def test_damaged_logs_dump_the_same_with_and_without_the_core(core, tmp_path):
    rendered = 0
    for seed in range(12):
        path = tmp_path / f"{seed:020d}.log"
        path.write_bytes(damaged(log_of(seed, 20), seed) if seed % 3 else log_of(seed, 20))
        for flags in FLAG_SETS:
            for version in ("4.3", "4.2"):
                rendered += _assert_dump_same(core, [*flags, "--kafka-version", version, str(path)], tmp_path)
    assert rendered > 50


@pytest.mark.corpus
def test_real_corpus_dumps_the_same_with_and_without_the_core(core):
    logs = corpus_logs(max_size=2 << 20)
    rendered = 0
    for path in logs[:: max(1, len(logs) // 25)]:
        for flags in (FLAG_SETS[1], FLAG_SETS[4]):
            rendered += _assert_dump_same(core, [*flags, str(path)], path.parent)
    assert rendered > 20


# --------------------------------------------------------------------------- large batches, in parts


def _parts_text(parts: records_render.BatchParts, style: records_render.RenderStyle) -> bytes:
    rendered = list(parts.render(style))
    return b",".join(rendered) if style.kind == records_render.JSON else b"".join(rendered)


@settings(deadline=None, max_examples=40)
@given(st.lists(record, min_size=1, max_size=40), st.integers(1, 7), st.integers(16, 400),
       st.sampled_from(["none", "gzip"]), st.integers(0, 2**32), st.booleans())
def test_large_batches_render_in_parts_as_whole(core, items, part_records, part_bytes, codec, seed, damage):
    """Parts (cut small here) render exactly what the whole batch renders; damage anywhere: no parts."""
    specs, offset = [], 0
    for key, value, headers, gap, ts in items:
        specs.append(RecordSpec(offset, ts, key, value, tuple(headers)))
        offset += 1 + gap
    data = encode_batch(specs, codec=codec)
    if damage:
        data = damaged(data, seed)
    batch = V2Batch(data, 0)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(records_render, "CORE", core)
        patch.setattr(records_render, "PART_RECORDS", part_records)
        patch.setattr(records_render, "PART_BYTES", part_bytes)
        parts = records_render.check_parts(batch, CAP)
        clean = _clean(batch) if len(data) >= batch.size else None
        if clean is None or not clean:
            assert parts is None
            return
        assert parts is not None
        assert list(parts.offsets) == [r[0] for r in clean]
        for print_data, skip, release in TEXT_CASES:
            style = text_renderer(print_data, skip, release, batch)._core_style
            assert _parts_text(parts, style) == records_render.render_records(batch, style, CAP)[0]
        for payload in PAYLOADS:
            style = records_render.json_style(payload)
            assert _parts_text(parts, style) == records_render.render_records(batch, style, CAP)[0]


def test_large_batches_dump_the_same_with_and_without_the_core(core, tmp_path):
    """Batches above 4096 records (plain, zstd, gzip; an offset gap; bytes that are not UTF-8), whole and damaged."""
    out = bytearray()
    offset = 0
    for index in range(4):
        step = 2 if index == 2 else 1
        specs = [RecordSpec(offset + i * step, 1_700_000_000_000 + i, b"k%d" % i,
                            (b"v\xff\xfe" if i % 999 == 0 else b"value-") * 5, ((b"h", b"x"),) if i % 500 == 0 else ())
                 for i in range(4500)]
        out += encode_batch(specs, codec=("none", "zstd", "gzip", "none")[index], base_offset=offset)
        offset += 4500 * step
    rendered = 0
    for name, data in (("whole", bytes(out)), ("damaged", damaged(bytes(out), 7)), ("flipped", _flip(bytes(out)))):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "00000000000000000000.log").write_bytes(data)
        for flags in FLAG_SETS:
            rendered += _assert_dump_same(core, [*flags, "00000000000000000000.log"], folder)
    assert rendered >= len(FLAG_SETS) * 4  # the whole log's large batches went through the core


def _flip(data: bytes) -> bytes:
    """A bit flipped inside the records of the last batch (its CRC fails, its records may not read)."""
    buf = bytearray(data)
    buf[len(buf) - 40] ^= 0x40
    return bytes(buf)
