"""Records handed over encoded (DumpOptions.json_records): the walk learns their offsets from the JSON
writer or, with no writer, decodes them itself; either way the events and summaries match the slow path."""

from __future__ import annotations

import io

from kseg.format import RecordSpec, encode_batch
from kseg.ops.dump import DumpOptions, DumpTarget, Problem, RecordsEvent, Summary, iter_dump
from kseg.render.dump import JsonRenderer, Sink, render

T0 = 1_700_000_000_000


def _segment(tmp_path, damaged: bool = False):
    path = tmp_path / "00000000000000000000.log"
    first = encode_batch([RecordSpec(o, T0, b"k", b"v") for o in (0, 1)])
    second = bytearray(encode_batch([RecordSpec(o, T0, b"k", b"v") for o in (5, 6)], base_offset=5))
    if damaged:
        second[-3] = 0x7F  # a record length that runs past the batch
    path.write_bytes(first + bytes(second))
    return [DumpTarget(path.name, path)]


def test_without_a_writer_the_walk_decodes_encoded_records_itself(tmp_path):
    fast = list(iter_dump(_segment(tmp_path), DumpOptions(deep_iteration=True, json_records=True)))
    slow = list(iter_dump(_segment(tmp_path), DumpOptions(deep_iteration=True)))
    assert all(e.encoded is not None for e in fast if isinstance(e, RecordsEvent))
    assert [e for e in fast if isinstance(e, Summary)] == [e for e in slow if isinstance(e, Summary)] != []


def test_the_json_writer_reports_offsets_and_output_matches_the_slow_path(tmp_path):
    def dump(options: DumpOptions) -> str:
        out = io.BytesIO()
        render(iter_dump(_segment(tmp_path), options), JsonRenderer(Sink(out, io.BytesIO()), options))
        return out.getvalue().decode()

    assert dump(DumpOptions(deep_iteration=True, json_records=True)) == dump(DumpOptions(deep_iteration=True))


def test_damaged_encoded_records_end_the_file_with_the_decoders_problem(tmp_path):
    fast = list(iter_dump(_segment(tmp_path, damaged=True), DumpOptions(deep_iteration=True, json_records=True)))
    slow = list(iter_dump(_segment(tmp_path, damaged=True), DumpOptions(deep_iteration=True)))
    assert [type(e) for e in fast] == [type(e) for e in slow]
    assert [e for e in fast if isinstance(e, Problem)] == [e for e in slow if isinstance(e, Problem)] != []
