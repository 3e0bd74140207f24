"""``kseg grep`` end to end on the partition of tests/grep/grepdata.py (see its docstring for what is in it).

The reference for every query is written here, independently of kseg.ops.grep:
each record of each batch (through ``Segment.iter_batches`` and
``iter_records``, the readers ``kseg dump`` uses) tested with plain Python
comparisons.  The JSON records are checked against ``kseg dump --format json
--deep-iteration``'s own record objects.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from grepdata import T0, write_partition

from kseg.cli import cli
from kseg.format.model import Record
from kseg.ops.discover import segment_logs
from kseg.segment import Segment


@pytest.fixture(scope="module")
def logdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("grep") / "logs"
    write_partition(root, "orders-0")
    write_partition(root, "payments-1")
    return root


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["grep", *args])


def grep_json(*args: str) -> list[dict]:
    result = run("--format", "json", *args)
    assert result.exit_code in (0, 1), result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


def all_records(part: Path) -> list[tuple[str, int, bool, int, bool, Record]]:
    """(file, batch position, control, producer id, transactional, record) for every record, in order."""
    out = []
    for log in segment_logs(part):
        with Segment(log) as seg:
            for batch in seg.iter_batches():
                pid = getattr(batch, "producer_id", -1)
                txn = bool(getattr(batch, "is_transactional", False))
                out += [(str(log), batch.position, bool(getattr(batch, "is_control", False)), pid, txn, r)
                        for r in batch.iter_records()]
    return out


TXN_STATE = {7: "committed", 8: "aborted", 9: "open"}  # what grepdata.py's producers did


def reference(part: Path, *, control: bool = False, **want: object) -> list[int]:
    """Offsets of the records that match, by plain comparisons over every record."""
    found = []
    for _, _, is_control, pid, txn, r in all_records(part):
        checks = [
            is_control == control,
            "key" not in want or r.key == want["key"],
            "key_re" not in want or (r.key is not None and re.search(want["key_re"], r.key, re.DOTALL)),  # type: ignore[arg-type]
            "value_re" not in want or (r.value is not None and re.search(want["value_re"], r.value, re.DOTALL)),  # type: ignore[arg-type]
            "header" not in want or any(k == want["header"][0] and (want["header"][1] is None or v == want["header"][1])  # type: ignore[index]
                                        for k, v in r.headers),
            "from_offset" not in want or r.offset >= want["from_offset"],  # type: ignore[operator]
            "to_offset" not in want or r.offset <= want["to_offset"],  # type: ignore[operator]
            "from_time" not in want or r.timestamp >= want["from_time"],  # type: ignore[operator]
            "to_time" not in want or r.timestamp <= want["to_time"],  # type: ignore[operator]
            "pid" not in want or pid == want["pid"],
            "txn" not in want or (txn and TXN_STATE.get(pid) == want["txn"]),
        ]
        if all(checks):
            found.append(r.offset)
    return found


QUERIES = [
    (["--key", "order-17"], {"key": b"order-17"}),
    (["--key", "hex:00ff62696e"], {"key": b"\x00\xffbin"}),
    (["--key-prefix", "t8-"], {"key_re": rb"^t8-"}),
    (["--key-regex", "^k1.$"], {"key_re": rb"^k1.$"}),  # anchored: no prefilter, every batch is read
    (["--key-regex", "k3"], {"key_re": rb"k3"}),
    (["--value-regex", "value 1[0-5]"], {"value_re": rb"value 1[0-5]"}),  # inside the gzip and magic-1 batches
    (["--value-regex", '"id":"C-17"'], {"value_re": rb'"id":"C-17"'}),
    (["--value-regex", "(?i)NO KEY"], {"value_re": rb"(?i)NO KEY"}),
    (["--header", "trace-id"], {"header": (b"trace-id", None)}),
    (["--header", "trace-id=aaaa"], {"header": (b"trace-id", b"aaaa")}),
    (["--header", "flag"], {"header": (b"flag", None)}),
    (["--header", "trace-id=nope"], {"header": (b"trace-id", b"nope")}),
    (["--from-offset", "20", "--to-offset", "44"], {"from_offset": 20, "to_offset": 44}),
    (["--from-offset", "41"], {"from_offset": 41}),
    (["--from-time", str(T0 + 160), "--to-time", str(T0 + 300)], {"from_time": T0 + 160, "to_time": T0 + 300}),
    (["--from-time", "2023-11-14T22:13:20.070Z"], {"from_time": T0 + 70}),
    (["--producer-id", "5"], {"pid": 5}),
    (["--producer-id", "5", "--value-regex", "2[45]"], {"pid": 5, "value_re": rb"2[45]"}),
    (["--txn", "committed"], {"txn": "committed"}),
    (["--txn", "aborted"], {"txn": "aborted"}),
    (["--txn", "open"], {"txn": "open"}),
    (["--key-regex", "t", "--value-regex", "value 9/"], {"key_re": rb"t", "value_re": rb"value 9/"}),
]


@pytest.mark.parametrize(("args", "want"), QUERIES, ids=[" ".join(a) for a, _ in QUERIES])
def test_each_predicate_finds_what_a_plain_comparison_finds(logdir: Path, args: list[str], want: dict) -> None:
    part = logdir / "orders-0"
    expected = reference(part, **want)
    got = grep_json(*args, str(part))
    assert [m["offset"] for m in got] == expected
    code = run(*args, str(part)).exit_code
    assert code == (0 if expected else 1)
    counted = run("-c", *args, str(part))  # counted without building the records where it can
    assert counted.stdout == f"{part}:{len(expected)}\n"


def test_control_records_are_searched_only_with_control(logdir: Path) -> None:
    part = logdir / "orders-0"
    got = grep_json("--control", str(part))
    assert [(m["offset"], m["control_type"]) for m in got] == [(21, "COMMIT"), (28, "ABORT")]
    assert [m["offset"] for m in grep_json("--control", "--txn", "aborted", str(part))] == [28]
    assert reference(part, control=True) == [21, 28]


def test_json_records_are_dump_records_plus_path_and_position(logdir: Path) -> None:
    part = logdir / "orders-0"
    dumped = CliRunner().invoke(cli, ["dump", "--format", "json", "--deep-iteration", str(part)])
    expected = []
    for line in dumped.stdout.splitlines():
        obj = json.loads(line)
        if obj.get("type") == "batch" and not obj["is_control"]:
            expected += [{"path": obj["path"], "position": obj["position"], **r} for r in obj["records"]]
    got = grep_json(str(part))
    assert got == expected
    assert len(got) == 48  # offsets 0-49 but the two markers


def test_text_line_is_the_dump_line_after_file_and_position(logdir: Path) -> None:
    part = logdir / "orders-0"
    result = run("--header", "trace-id=4bf92f35", str(part))
    assert result.exit_code == 0
    assert result.stdout == (
        f"{part}/00000000000000000000.log:141:| offset: 5 CreateTime: 1700000000010 keySize: 8 valueSize: 26 "
        'sequence: -1 headerKeys: [trace-id] key: order-17 payload: {"customer":{"id":"C-17"}}\n'
    )
    dump = CliRunner().invoke(cli, ["dump", "--print-data-log", str(part / "00000000000000000000.log")])
    assert result.stdout.split(":141:", 1)[1] in dump.stdout.splitlines(keepends=True)


def test_count_list_and_no_match(logdir: Path) -> None:
    counted = run("-c", "--key-regex", "^t[79]-", str(logdir))
    assert (counted.exit_code, counted.stdout) == (0, f"{logdir}/orders-0:6\n{logdir}/payments-1:6\n")
    listed = run("-l", "--key", "late-b", str(logdir / "orders-0"), str(logdir / "payments-1" / "00000000000000000000.log"))
    assert (listed.exit_code, listed.stdout) == (0, f"{logdir}/orders-0\n")
    as_json = run("-c", "--format", "json", "--key", "late-b", str(logdir / "orders-0"))
    assert as_json.stdout == f'{{"path":"{logdir}/orders-0","matches":1}}\n'
    none = run("--key", "absent", str(logdir))
    assert (none.exit_code, none.stdout, none.stderr) == (1, "", "")


def test_jobs_give_the_same_output(logdir: Path) -> None:
    one = run("--value-regex", "value [1-4]", str(logdir))
    two = run("--jobs", "2", "--value-regex", "value [1-4]", str(logdir))
    assert one.exit_code == two.exit_code == 0
    assert one.stdout == two.stdout
    assert one.stdout.count("\n") == 2 * len(reference(logdir / "orders-0", value_re=rb"value [1-4]"))


def _damage_first_batch(part: Path) -> None:
    """Make the first batch's record count one too many: Kafka's iterator hands out its five records, then
    throws where the sixth should start (``kseg dump`` prints the five, then the problem)."""
    log = part / "00000000000000000000.log"
    data = bytearray(log.read_bytes())
    data[57:61] = (6).to_bytes(4, "big")  # records_count 5 -> 6
    log.write_bytes(bytes(data))


def test_a_damaged_batch_is_a_warning_and_the_search_goes_on(tmp_path: Path) -> None:
    part = write_partition(tmp_path)
    _damage_first_batch(part)
    result = run("--key-regex", "^k[0-9]$", str(part))
    assert result.exit_code == 0
    assert [line.split("| offset: ")[1].split()[0] for line in result.stdout.splitlines()] == [
        "0", "1", "2", "3", "4", "9"]
    assert re.fullmatch(rf"kseg: warning: {part}/00000000000000000000\.log byte \d+: .+\n", result.stderr)


def test_windows_start_through_the_index_and_timeindex(tmp_path: Path) -> None:
    """With --from-offset (--from-time) the walk starts where .index (.timeindex) points: the damaged
    first batch is never read.  Without a window it is, and reported."""
    part = write_partition(tmp_path)
    _damage_first_batch(part)
    for window in (["--from-offset", "29", "--to-offset", "30"], ["--from-time", str(T0 + 90), "--to-time", str(T0 + 91)]):
        result = run(*window, str(part))  # no needle: every batch the window reaches is read
        assert (result.exit_code, result.stderr) == (0, "")
        assert [line.split("| offset: ")[1].split()[0] for line in result.stdout.splitlines()] == ["29", "30"]
    assert "kseg: warning" in run("--to-offset", "30", str(part)).stderr
    # a batch without the searched bytes is not read at all: its damage goes unreported (grep is not verify)
    assert run("--key", "k30", str(part)).stderr == ""


def test_grep_reads_only(logdir: Path) -> None:
    before = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in logdir.rglob("*") if p.is_file()}
    run("--txn", "aborted", "--jobs", "2", str(logdir))
    after = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in logdir.rglob("*") if p.is_file()}
    assert after == before


def test_bad_arguments_are_usage_errors(logdir: Path) -> None:
    for args in (["--key", "hex:zz"], ["--value-regex", "("], ["--from-offset", "9", "--to-offset", "3"]):
        result = run(*args, str(logdir))
        assert result.exit_code == 2
        assert result.stderr.startswith("kseg: error: ")


def test_a_file_that_is_not_a_segment_is_refused(tmp_path: Path) -> None:
    part = write_partition(tmp_path)
    result = run(str(part / "00000000000000000000.index"))
    assert result.exit_code == 2
    assert result.stderr == (f"kseg: error: {part}/00000000000000000000.index: kseg grep takes .log segments, "
                             "partition directories or log directories (see 'kseg grep --help')\n")


def test_copy_keeps_results_when_moved(tmp_path: Path, logdir: Path) -> None:
    """Paths print as given: a relative PATH gives relative file names."""
    shutil.copytree(logdir / "orders-0", tmp_path / "orders-0")
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = run("--key", "k30", "orders-0")
    finally:
        os.chdir(cwd)
    assert result.stdout.startswith("orders-0/00000000000000000000.log:1169:| offset: 30 ")


def test_table_lists_file_position_offset_time_key_value_headers(logdir: Path) -> None:
    result = CliRunner().invoke(cli, ["grep", "--format", "table", "--header", "trace-id", str(logdir / "orders-0")],
                                env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code == 0
    rows = [line for line in result.stdout.splitlines() if "00000000000000000000.log" in line]
    assert len(rows) == 2
    assert "│ 141 " in rows[0] and "2023-11-14 22:13:20.010" in rows[0] and "order-17" in rows[0]
    assert "trace-id=4bf92f35" in rows[0] and "trace-id=aaaa, flag=null" in rows[1]
    assert all(h in result.stdout for h in ("file", "position", "offset", "time (UTC)", "key", "value", "headers"))
