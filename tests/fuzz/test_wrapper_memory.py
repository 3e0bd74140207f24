"""A V0/V1 wrapper of many messages is streamed: memory does not grow with its inner messages.

The fuzz campaign's compression bomb under the cap (docs/fuzzing.md, bench/bench_memory.py's
``legacy-wrapper``): a gzip V1 wrapper of 3.6 M one-byte messages took about 1.7 GB in the four
commands below while its messages were read into a list.  Here a twelfth-scale wrapper of 200 000
messages (7 MB decompressed) is read by each command in a child process; held as records it costs
about 90 MB more than the interpreter, streamed it costs nothing per message.  The peak RSS
(``ru_maxrss`` of the child, from a small interpreter; never wall time) must stay under 60 MB, and
each output is checked.  CI runs this on both paths (the core, and KSEG_PURE=1).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
MESSAGES = 200_000
#: Well above the ~25-30 MB a command takes on this input, well below what listing the messages took.
LIMIT_MB = 60


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_memory", ROOT / "bench" / "bench_memory.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: Runs the command from a small interpreter (a child of pytest would start with pytest's peak counted).
_WRAPPER = """
import json, resource, subprocess, sys
argv, out = json.loads(sys.argv[1]), sys.argv[2]
with open(out, "wb") as sink:
    code = subprocess.run(argv, stdout=sink, stderr=subprocess.DEVNULL, timeout=900).returncode
print(json.dumps([code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024]))
"""


@pytest.fixture(scope="module")
def wrapper(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _bench().legacy_wrapper(tmp_path_factory.mktemp("wrapper"), MESSAGES / 3_600_000)


def _run(argv: list[str], out: Path) -> float:
    done = subprocess.run([sys.executable, "-c", _WRAPPER, json.dumps(argv), str(out)],
                          capture_output=True, text=True, check=True)
    code, rss = json.loads(done.stdout)
    assert code == 0, f"{argv[3:]} exited {code}"
    return float(rss)


def _kseg(*args: str) -> list[str]:
    return [sys.executable, "-m", "kseg", *args]


def test_dump_prints_every_inner_message_without_holding_them(wrapper: Path, tmp_path: Path) -> None:
    text = tmp_path / "dump.txt"
    rss = _run(_kseg("dump", "--print-data-log", str(wrapper)), text)
    lines = text.read_bytes().splitlines()
    assert len(lines) == 3 + MESSAGES  # "Dumping", "Log starting offset", the wrapper's line, the messages
    assert lines[-1].startswith(b"| offset: 199999 CreateTime: 1700000000000 keySize: -1 valueSize: 1 ")
    assert lines[-1].endswith(b" payload: x")
    assert rss < LIMIT_MB, f"dump: {rss:.0f} MB"


def test_json_dump_prints_every_inner_message_without_holding_them(wrapper: Path, tmp_path: Path) -> None:
    out = tmp_path / "dump.json"
    rss = _run(_kseg("dump", "--format", "json", "--print-data-log", str(wrapper)), out)
    offsets = [r["offset"] for line in out.read_text().splitlines()
               for r in json.loads(line).get("records", ())]
    assert offsets == list(range(MESSAGES))
    assert rss < LIMIT_MB, f"dump --format json: {rss:.0f} MB"


def test_verify_deep_checks_every_inner_message_without_holding_them(wrapper: Path, tmp_path: Path) -> None:
    out = tmp_path / "verify.json"
    rss = _run(_kseg("verify", "--deep", "-j", "1", "--format", "json", str(wrapper)), out)
    summary = json.loads(out.read_text().splitlines()[-1])
    assert (summary["records"], summary["errors"], summary["warnings"]) == (MESSAGES, 0, 0), summary
    assert rss < LIMIT_MB, f"verify --deep: {rss:.0f} MB"


def test_recover_salvage_counts_the_inner_messages_without_holding_them(wrapper: Path, tmp_path: Path) -> None:
    outdir = tmp_path / "salvaged"
    rss = _run(_kseg("recover", "--salvage", str(wrapper), "-o", str(outdir)), tmp_path / "recover.txt")
    assert (outdir / wrapper.name).read_bytes() == wrapper.read_bytes()
    assert rss < LIMIT_MB, f"recover --salvage: {rss:.0f} MB"
