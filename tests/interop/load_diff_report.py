"""Disagreements of kseg's loading model with Kafka's loader, grouped by kind, one recipe each.

    KSEG_SHARED=../shared python -m tests.interop.load_diff_report --n 300 --seed 1
    python -m tests.interop.load_diff_report --recipe '{"name": ...}'      # replay one printed recipe
    python -m tests.interop.load_diff_report --n 300 --seed 1 --minimise   # shrink each group's recipe

Each group is keyed by :func:`load_diff.signature` (the fields that differ and the outcomes / exceptions
involved); a group lists how many partitions fell in it, the known kind of test_load_vs_kafka's
``KNOWN_DISAGREEMENTS`` that covers it (or ``NEW``), one disagreement and its recipe.  ``--minimise``
shrinks each group's recipe (logdir_gen.shrink_candidates: an operator, a partition, a segment or a batch
dropped at a time) while the same signature remains, running every candidate of a round in one JVM.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import load_diff as ld  # noqa: E402
import logdir_gen as gen  # noqa: E402
from kafka_storage import KafkaStorage  # noqa: E402


def known_kind(case: ld.Case, diff: ld.Diff) -> str | None:
    """The KNOWN_DISAGREEMENTS kind that covers ``diff``, if any (imported lazily: it lives in the test)."""
    try:
        from test_load_vs_kafka import classify
    except ImportError:
        return None
    return classify(case, diff)


def minimise(storage: KafkaStorage, targets: list[tuple[gen.Recipe, tuple[str, ...]]], work: Path,
             rounds: int = 25, per_round: int = 12) -> list[gen.Recipe]:
    """Each recipe shrunk (greedy) while it still shows its target signature.

    Every round tries up to ``per_round`` one-step-smaller candidates of every recipe still shrinking,
    all in one build and one LoadLogDir run, and keeps each recipe's first candidate that still disagrees
    the same way; a recipe none of whose candidates does is done.
    """
    current = [json.loads(json.dumps(r)) for r, _ in targets]
    offset = [0] * len(targets)  # candidates already tried without success, per recipe
    active = set(range(len(targets)))
    for r in range(rounds):
        batch: list[tuple[int, gen.Recipe]] = []
        for i in sorted(active):
            candidates = gen.shrink_candidates(current[i])[offset[i]:offset[i] + per_round]
            if not candidates:
                active.discard(i)
            for k, cand in enumerate(candidates):
                cand["name"] = f"m{r:02d}-{i:03d}-{k:03d}"
                batch.append((i, cand))
        if not batch:
            break
        cases = ld.run(storage, [c for _, c in batch], work / f"round-{r}")
        shutil.rmtree(work / f"round-{r}", ignore_errors=True)
        shrunk: set[int] = set()
        for (i, _), case in zip(batch, cases):
            if i in shrunk or case.path is None:
                continue
            if any(ld.signature(d) == targets[i][1] for d in ld.compare(case)):
                current[i], offset[i] = case.recipe, 0
                shrunk.add(i)
        for i in active - shrunk:
            offset[i] += per_round
        print(f"   minimise round {r}: {len(batch)} candidates, {len(shrunk)} shrunk", flush=True)
    for recipe, (original, _) in zip(current, targets):
        recipe["name"] = original["name"]
    return current


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=300, help="log directories to generate")
    parser.add_argument("--seed", type=int, default=ld.DEFAULT_SEED)
    parser.add_argument("--recipe", help="replay this one recipe (JSON) instead of generating")
    parser.add_argument("--minimise", action="store_true", help="shrink each group's recipe")
    parser.add_argument("--keep", help="build the log directories here and keep them")
    args = parser.parse_args(argv)

    storage = KafkaStorage.create()
    recipes = [json.loads(args.recipe)] if args.recipe else ld.recipes(args.seed, args.n)
    root = Path(args.keep) if args.keep else ld.scratch_root(Path(tempfile.gettempdir()))
    timing = ld.Timing()
    started = time.perf_counter()
    cases = ld.run(storage, recipes, root, timing)
    partitions = sum(len(c.kafka) for c in cases)
    groups: dict[tuple[str, ...], list[tuple[ld.Case, ld.Diff]]] = defaultdict(list)
    for case in cases:
        for diff in ld.compare(case):
            groups[ld.signature(diff)].append((case, diff))
    print(f"seed {args.seed}: {len(cases)} log dirs, {partitions} partitions, "
          f"{sum(c.unbuildable is not None for c in cases)} unbuildable, "
          f"{sum(len(v) for v in groups.values())} disagreements in {len(groups)} groups; "
          f"{time.perf_counter() - started:.1f} s {timing.as_dict()}", flush=True)
    ordered = sorted(groups.items(), key=lambda item: -len(item[1]))
    shrunk = [found[0][0].recipe for _, found in ordered]
    if args.minimise:
        shrunk = minimise(storage, [(found[0][0].recipe, sig) for sig, found in ordered], root / "minimise")
    for (sig, found), recipe in zip(ordered, shrunk):
        case, diff = found[0]
        kinds = sorted({known_kind(c, d) or "NEW" for c, d in found})
        print(f"\n== {len(found)} x {' | '.join(sig)}   [{', '.join(kinds)}]")
        print(f"   {case.name} {diff.dir or '(log dir)'}: {diff.describe()}"[:2000])
        print(f"   recipe: {gen.describe(recipe)}", flush=True)
    if args.recipe and args.keep:
        print(f"\nbuilt in {root}")
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
