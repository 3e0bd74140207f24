"""Shrink a saved finding: drop whole entries and tail bytes while the same bucket still fails.

``python -m tools.fuzz.minimize DIR`` takes a directory written by ``--save`` (its finding.json and
partition), replays the command, then greedily removes one framed entry at a time (in a .log), and
halves of whatever follows the last framed entry, keeping every cut after which the run still
fails in the same bucket (command, kind, exception type, innermost kseg frame).  The mutated file
in DIR is rewritten with the smallest failing bytes; finding.json gets the sizes before and after.
At most ``--tries`` runs, so a minimisation takes seconds, not minutes.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from tools.fuzz.contract import Limits, check, run_kseg, snapshot
from tools.fuzz.fields import entries


def _partition(finding_dir: Path) -> Path:
    return next(p for p in finding_dir.iterdir() if p.is_dir())


def reproduces(finding_dir: Path, target: str, data: bytes, limits: Limits) -> bool:
    """Whether ``data`` as the mutated file still fails in the finding's bucket."""
    info = json.loads((finding_dir / "finding.json").read_text())
    with tempfile.TemporaryDirectory(prefix="kseg-min-") as tmp:
        logdir, out = Path(tmp) / "in", Path(tmp) / "out"
        part = logdir / _partition(finding_dir).name
        shutil.copytree(_partition(finding_dir), part)
        (part / target).write_bytes(data)
        out.mkdir()
        paths = {"file": part / target, "part": part, "logdir": logdir, "out": out}
        args = [arg.format(**{k: str(v) for k, v in paths.items()}) for arg in info["args"]]
        before = snapshot(logdir)
        run = run_kseg(args, out, limits)
        failures = check(info["bucket"][0], run, before, snapshot(logdir), limits)
    return any(list(f.key) == info["bucket"] for f in failures)


def _cuts(data: bytes) -> list[tuple[int, int]]:
    """Candidate (start, end) ranges to remove: each framed entry, then the unframed tail by halves."""
    framed = entries(data)
    cuts = [(e.position, e.end) for e in reversed(framed)]
    tail = framed[-1].end if framed else 0
    size = len(data) - tail
    while size >= 1:
        cuts.append((len(data) - size, len(data)))
        size //= 2
    return cuts


def shrink(data: bytes, still_fails: Callable[[bytes], bool], tries: int) -> bytes:
    """Greedy removal of ranges from ``data`` while ``still_fails``; at most ``tries`` calls."""
    changed = True
    while changed and tries > 0:
        changed = False
        for start, end in _cuts(data):
            if tries <= 0:
                break
            candidate = data[:start] + data[end:]
            tries -= 1
            if candidate != data and still_fails(candidate):
                data, changed = candidate, True
                break
    return data


def minimize(finding_dir: Path, tries: int = 60, limits: Limits | None = None) -> tuple[int, int]:
    """Shrink the finding's mutated file in place; (bytes before, bytes after)."""
    limits = limits or Limits()
    info = json.loads((finding_dir / "finding.json").read_text())
    part = _partition(finding_dir)
    name = Path(info["mutated_file"]).name
    data = (part / name).read_bytes()
    if not reproduces(finding_dir, name, data, limits):
        raise SystemExit(f"{finding_dir}: the finding does not reproduce")
    small = shrink(data, lambda d: reproduces(finding_dir, name, d, limits), tries)
    (part / name).write_bytes(small)
    info["minimized"] = {"bytes_before": len(data), "bytes_after": len(small)}
    (finding_dir / "finding.json").write_text(json.dumps(info, indent=2) + "\n")
    return len(data), len(small)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.fuzz.minimize", description=__doc__)
    parser.add_argument("dirs", nargs="+", type=Path, help="directories written by --save")
    parser.add_argument("--tries", type=int, default=60)
    options = parser.parse_args(argv)
    for directory in options.dirs:
        before, after = minimize(directory, options.tries)
        print(f"{directory}: {before} -> {after} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
