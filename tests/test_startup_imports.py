"""Start-up stays small: the read-only paths import only what they use (docs/core.md).

No timing here (speed lives in bench/): each command runs in a fresh interpreter on a clean,
uncompressed segment and the test lists the modules it left in ``sys.modules``.  A module in
``HEAVY`` on that list means an import that costs every run of the command and that this run did
not need -- the codec libraries, rich, pyarrow/pyspark, the internal-topic schemas, the other
commands' ops and renderers.  The exit code and output are checked too, so the run is a real one.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest

from kseg.cli import COMMANDS, SUMMARIES, cli
from kseg.format import RecordSpec, encode_batch

#: Never needed to verify, reindex or dump a clean, uncompressed V2 segment.
HEAVY = (
    "rich",
    "pyarrow",
    "pyspark",
    "zstandard",
    "lz4",
    "snappy",
    "cramjam",
    "kseg.spark",
    "kseg.ops.recover.run",
    "kseg.ops.convert.run",
    "kseg.ops.triage.run",
    "kseg.render.recover",
    "kseg.render.convert",
)
#: Also not needed by verify and reindex (dump's text renderer decodes internal topics' records).
NOT_FOR_VERIFY = (*HEAVY, "kseg.format.schemas", "kseg.format.internal", "kseg.ops.dump", "kseg.render.dump")

#: Runs the CLI in-process, then prints the loaded module names as one JSON line on stderr.
RUNNER = """
import sys
from kseg.cli import main
sys.argv = ["kseg", *sys.argv[1:]]
try:
    main()
except SystemExit as done:
    code = done.code
modules = sorted(sys.modules)  # before json is imported to print them
import json
print(json.dumps({"code": code, "modules": modules}), file=sys.stderr)
"""


def _segment(tmp_path: Path) -> Path:
    path = tmp_path / "t-0" / "00000000000000000000.log"
    path.parent.mkdir()
    data = b"".join(
        encode_batch([RecordSpec(base + i, 1_700_000_000_000 + i, b"k", b"v" * 50) for i in range(5)], base_offset=base)
        for base in range(0, 50, 5)
    )
    path.write_bytes(data)
    return path


def _loaded(argv: list[str], cwd: Path) -> tuple[int, set[str], str]:
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, *argv], capture_output=True, text=True, check=False, cwd=cwd, timeout=120
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    return report["code"], set(report["modules"]), done.stdout


def _heavy(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


def test_verify_of_a_clean_segment_imports_nothing_heavy(tmp_path: Path) -> None:
    segment = _segment(tmp_path)
    code, modules, out = _loaded(["verify", str(segment)], tmp_path)
    assert code == 0
    assert out.splitlines()[-2:] == [out.splitlines()[-2], "verdict: ok: the broker starts; nothing lost"]
    assert out.splitlines()[-2].endswith("10 batches: clean")
    assert "kseg.ops.verify" in modules  # the run did happen in this interpreter
    assert _heavy(modules, NOT_FOR_VERIFY) == []


def test_reindex_of_a_clean_segment_imports_nothing_heavy(tmp_path: Path) -> None:
    segment = _segment(tmp_path)
    code, modules, _ = _loaded(["reindex", "-o", str(tmp_path / "out"), str(segment)], tmp_path)
    assert code == 0
    assert (tmp_path / "out" / "00000000000000000000.index").exists()
    assert "kseg.ops.reindex.run" in modules
    assert _heavy(modules, NOT_FOR_VERIFY) == []


@pytest.mark.parametrize("extra", [[], ["--deep-iteration"], ["--deep-iteration", "--format", "json"]])
def test_dump_of_a_clean_segment_imports_nothing_heavy(tmp_path: Path, extra: list[str]) -> None:
    segment = _segment(tmp_path)
    code, modules, out = _loaded(["dump", *extra, str(segment)], tmp_path)
    assert code == 0
    assert out.count('"type":"batch"' if "json" in extra else "baseOffset:") == 10
    assert "kseg.ops.dump" in modules
    assert _heavy(modules, HEAVY) == []


def test_help_imports_no_command_s_dependencies(tmp_path: Path) -> None:
    code, modules, out = _loaded(["--help"], tmp_path)
    assert code == 0
    assert "verify" in out
    assert _heavy(modules, HEAVY) == []


@pytest.mark.parametrize("width", [50, 80, 120])
def test_help_lists_the_commands_own_summaries(width: int) -> None:
    """``kseg --help`` draws its listing from SUMMARIES: the same text click makes from the commands."""
    assert set(SUMMARIES) == set(COMMANDS)
    ctx = click.Context(cli)
    listings = []
    for format_commands in (cli.format_commands, lambda c, f: click.Group.format_commands(cli, c, f)):
        formatter = click.HelpFormatter(width=width)
        format_commands(ctx, formatter)
        listings.append(formatter.getvalue())
    assert listings[0] == listings[1]
    assert listings[0].count("\n") == len(COMMANDS) + 1


#: Not needed by a grep of literal bytes on one core: dump's renderers, the decoders, the pool, the writers,
#: and for -c and -l in text neither json nor the JVM's text (records and JSON are not printed).
NOT_FOR_GREP = (*NOT_FOR_VERIFY, "kseg.ops.grep.decoding", "kseg.ops.grep.txnspans", "kseg.decode", "concurrent",
                "logging", "tempfile", "random", "shutil", "bz2", "lzma", "json", "kseg.format.jvm_text",
                "kseg.render.records_json")


@pytest.mark.parametrize("argv", [["--key", "k", "-c"], ["--value-regex", "v{50}", "-c"], ["--value", "nowhere", "-l"]])
def test_grep_of_a_clean_segment_imports_nothing_heavy(tmp_path: Path, argv: list[str]) -> None:
    segment = _segment(tmp_path)
    code, modules, out = _loaded(["grep", *argv, str(segment)], tmp_path)
    assert (code, out) == ((1, "") if "-l" in argv else (0, f"{segment}:50\n"))
    assert "kseg.ops.grep.search" in modules
    assert _heavy(modules, NOT_FOR_GREP) == []
