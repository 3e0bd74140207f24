"""One large value in a batch under the read cap: the JSON dump writes it in pieces, in bounded memory.

The attack as found: one batch holding a 100 MiB value of ``\\x1b`` bytes made
``kseg dump --format json --print-data-log`` peak at 1.35 GB (3.3 GB on the pure
path) -- each byte escapes to six, and the record's text was copied whole three
times.  Here the same attack at 40 MiB runs under a 300 MiB address space on
both paths, and the line written is exactly the one of the whole-string writers.
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kseg.format import encode_batch
from kseg.format.model import Record, RecordSpec
from kseg.render.dump import large_records
from kseg.render.dump.jsonl import PAYLOAD_ENCODERS

REPO = Path(__file__).resolve().parents[2]
TIMESTAMP = 1_700_000_000_000
LIMIT = 300 << 20
PRELUDE = f"import resource\nresource.setrlimit(resource.RLIMIT_AS, ({LIMIT}, {LIMIT}))\n"


def _kseg(*args: str, pure: bool) -> subprocess.CompletedProcess[bytes]:
    code = f"{PRELUDE}import sys\nfrom kseg.cli import main\nsys.argv = ['kseg', *sys.argv[1:]]\nmain()\n"
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "KSEG_PURE": "1" if pure else ""}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, env=env, timeout=300,
                          stdin=subprocess.DEVNULL, check=False)


def _log(tmp_path: Path, value: bytes) -> Path:
    path = tmp_path / "t-0" / "00000000000000000000.log"
    path.parent.mkdir()
    path.write_bytes(encode_batch([RecordSpec(0, TIMESTAMP, b"k", value)]))
    return path


@pytest.mark.parametrize("pure", [False, True], ids=["core", "pure"])
@pytest.mark.parametrize(("byte", "escaped"), [(b"\x1b", b"\\u001b"), (b"a", b"a")], ids=["escapes", "plain"])
def test_a_40_mib_value_dumps_as_json_under_300_mib(tmp_path: Path, pure: bool, byte: bytes, escaped: bytes) -> None:
    size = 40 << 20
    log = _log(tmp_path, byte * size)
    shallow = _kseg("dump", "--format", "json", str(log), pure=pure)
    deep = _kseg("dump", "--format", "json", "--print-data-log", str(log), pure=pure)
    assert (deep.returncode, deep.stderr) == (0, b""), deep.stderr[-2000:]
    batch_line = next(line for line in shallow.stdout.splitlines() if line.startswith(b'{"type":"batch"'))
    record = b'{"offset":0,"timestamp":%d,"key":"k","value":"%s","headers":[]}' % (TIMESTAMP, escaped * size)
    assert batch_line + b"\n" in shallow.stdout
    assert deep.stdout == shallow.stdout.replace(batch_line + b"\n", batch_line[:-1] + b',"records":[' + record + b"]}\n")


PAYLOADS = [
    b"",
    b"plain ascii " * 50,
    "caf\u00e9 \U0001f600 \u2028".encode() * 40,  # multi-byte characters cut by every slice boundary
    bytes(range(256)) * 7,  # not UTF-8: base64 under --payload utf8
    b"\x1b\x00\"\\\n" * 30,
    b"ok" * 100 + b"\xff",  # invalid only in the last slice
]


@pytest.mark.parametrize("mode", sorted(PAYLOAD_ENCODERS))
@pytest.mark.parametrize("data", PAYLOADS, ids=range(len(PAYLOADS)))
def test_pieces_join_to_the_whole_string_writer(monkeypatch: pytest.MonkeyPatch, mode: str, data: bytes) -> None:
    """Tiny slices (3 and 7 bytes) cut characters and base64 groups everywhere: the text is unchanged."""
    whole = PAYLOAD_ENCODERS[mode]
    record = Record(5, 6, data, data, [(b"h\xffk", data), (b"n", None)])
    expected = (f'{{"offset":5,"timestamp":6,"key":{whole(data)},"value":{whole(data)},'
                f'"headers":[["h\ufffdk",{whole(data)}],["n",null]]}}')
    for piece in (3, 7 * 3):
        monkeypatch.setattr(large_records, "PIECE", piece)
        out: list[str] = []
        large_records.write_record(record, mode, out.append)
        assert "".join(out) == expected


def test_only_plain_records_over_the_threshold_are_large(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(large_records, "LARGE_PAYLOAD", 4)
    assert not large_records.is_large(Record(0, 0, b"1234", b"1234", [(b"k", b"1234"), (b"k", None)]))
    assert large_records.is_large(Record(0, 0, None, b"12345", []))
    assert large_records.is_large(Record(0, 0, b"12345", None, []))
    assert large_records.is_large(Record(0, 0, None, None, [(b"k", b"12345")]))
    assert not large_records.is_large((0, 0, None, b"12345", []))


def test_base64_pieces_are_whole_groups() -> None:
    assert large_records.PIECE % 3 == 0
    data = bytes(range(256)) * 5000
    out: list[str] = []
    large_records.write_record(Record(0, 0, None, data, []), "base64", out.append)
    assert "".join(out) == f'{{"offset":0,"timestamp":0,"key":null,"value":"{base64.b64encode(data).decode()}","headers":[]}}'


@pytest.mark.parametrize("pure", [False, True], ids=["core", "pure"])
def test_a_40_mib_value_dumps_as_kafka_text_under_300_mib(tmp_path: Path, pure: bool) -> None:
    size = 40 << 20
    log = _log(tmp_path, b"\x1b" * size)
    result = _kseg("dump", "--print-data-log", str(log), pure=pure)
    assert (result.returncode, result.stderr) == (0, b""), result.stderr[-2000:]
    record = (b"| offset: 0 CreateTime: %d keySize: 1 valueSize: %d sequence: -1 headerKeys: [] key: k payload: %s\n"
              % (TIMESTAMP, size, b"\x1b" * size))
    assert result.stdout.endswith(record)
    assert result.stdout.count(b"\n") == 4  # Dumping, Log starting offset, the batch, the record


def test_java_text_pieces_join_to_the_whole_decoding(monkeypatch: pytest.MonkeyPatch) -> None:
    """Slices cut before ASCII bytes only: truncated, overlong and surrogate sequences decode as Java's."""
    from kseg.format.jvm_text import java_utf8

    rng = __import__("random").Random(7)
    alphabet = [b"a", b"\n", b"\xc3\xa9", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80",
                b"\xc0\xaf", b"\xff", b"\x80", b"\xf4\x90\x80\x80"]
    for piece in (3, 6, 9):
        monkeypatch.setattr(large_records, "PIECE", piece)
        for _ in range(300):
            data = b"".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40)))
            assert "".join(large_records.java_text_pieces(data)) == java_utf8(data), data


@pytest.mark.parametrize("args", [["--format", "json", "--payload", "utf8"], ["--format", "json", "--payload", "hex"],
                                  ["--format", "json", "--payload", "base64"], []], ids=["utf8", "hex", "base64", "text"])
def test_mixed_batches_dump_the_same_on_both_paths(tmp_path: Path, args: list[str]) -> None:
    """Large and small records in one batch, a gzip batch, and a batch of 200 KB records (parts over 1 MiB,
    no large payload): the core and the pure path agree byte for byte, and every value comes back whole."""
    from kseg.render.dump.jsonl import decode_payload

    big = [RecordSpec(i, TIMESTAMP + i, b"k%d" % i, b"\x1b\xc3\xa9x" * 50_000 if i % 7 else b"\xff" * (3 << 20))
           for i in range(30)]
    path = tmp_path / "t-0" / "00000000000000000000.log"
    path.parent.mkdir()
    path.write_bytes(encode_batch(big[:15])
                     + encode_batch([RecordSpec(100 + i, 1, None, b"y" * 200_000) for i in range(30)], base_offset=100)
                     + encode_batch(big[15:], base_offset=15, codec="gzip"))
    core, pure = (_kseg("dump", *args, "--print-data-log", str(path), pure=p) for p in (False, True))
    assert core.returncode == pure.returncode == 0
    assert core.stdout == pure.stdout
    if args:
        import json

        records = [r for line in core.stdout.splitlines() if b'"records"' in line for r in json.loads(line)["records"]]
        assert [decode_payload(r["value"], args[-1]) for r in records] == (
            [s.value for s in big[:15]] + [b"y" * 200_000] * 30 + [s.value for s in big[15:]])
