"""``python -m tools.fuzz``: run a bounded, seeded campaign and exit 1 on any new failure.

CI runs it with its defaults (seed 14, 150 s, 2 jobs, 512 MB, 10 s per run).  Exit status: 0 when
every failure is a known open one (tools/fuzz/known.py), 1 when a new bucket appears, 2 on usage
errors.  ``--only N`` replays mutant N of ``--seed``; ``--save DIR`` keeps each bucket's first
mutant with its partition and a finding.json.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tools.fuzz.campaign import Config, run_campaign
from tools.fuzz.contract import Limits
from tools.fuzz.report import save, summary
from tools.fuzz.seeds import DEFAULT_ROOTS, discover


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m tools.fuzz", description=__doc__)
    parser.add_argument("--seed", type=int, default=14, help="campaign seed (default 14)")
    parser.add_argument("--budget", type=float, default=150.0, help="wall-clock seconds (default 150)")
    parser.add_argument("--mutants", type=int, default=1_000_000, help="stop after N mutants")
    parser.add_argument("--jobs", type=int, default=2, help="kseg processes at a time (default 2)")
    parser.add_argument("--memory-mb", type=int, default=512, help="address-space and RSS cap per run")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per run (default 10)")
    parser.add_argument("--only", type=int, help="run only mutant N (replay a finding)")
    parser.add_argument("--seeds", type=Path, action="append", default=[],
                        help="another directory of seed files (repeatable; added to fixtures/)")
    parser.add_argument("--save", type=Path, help="write each bucket's first mutant here")
    parser.add_argument("--progress", type=float, default=30.0, help="seconds between progress lines (0: none)")
    return parser


def main(argv: list[str] | None = None) -> int:
    options = _parser().parse_args(argv)
    config = Config(
        seed=options.seed, mutants=options.mutants, budget_s=options.budget, jobs=options.jobs,
        limits=Limits(options.memory_mb, options.timeout), only=options.only, progress_s=options.progress,
    )
    seeds = discover([*DEFAULT_ROOTS, *options.seeds])
    print(f"kseg fuzz: {len(seeds)} seed files", flush=True)
    result = run_campaign(seeds, config)
    text, new = summary(result, config)
    print(text)
    if options.save:
        for path in save(result, config, options.save):
            print(f"saved {path}")
    return 1 if new else 0


if __name__ == "__main__":
    sys.exit(main())
