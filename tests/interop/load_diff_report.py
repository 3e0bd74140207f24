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
import hashlib
import json
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
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


Still = Callable[[ld.Case], bool]


def minimise(storage: KafkaStorage, targets: list[tuple[gen.Recipe, Still]], work: Path,
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
            if targets[i][1](case):
                current[i], offset[i] = case.recipe, 0
                shrunk.add(i)
        for i in active - shrunk:
            offset[i] += per_round
        print(f"   minimise round {r}: {len(batch)} candidates, {len(shrunk)} shrunk", flush=True)
    for recipe, (original, _) in zip(current, targets):
        recipe["name"] = original["name"]
    return current


def _same_signature(sig: tuple[str, ...]) -> Still:
    return lambda case: any(ld.signature(d) == sig for d in ld.compare(case))


def _only_kind(kind: str) -> Still:
    """Every disagreement of the case is of ``kind`` (what a fixture of that kind must show)."""
    from test_load_vs_kafka import classify

    def still(case: ld.Case) -> bool:
        diffs = ld.compare(case)
        return bool(diffs) and all(classify(case, d) == kind for d in diffs)
    return still


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _fixture_diffs(target: Path) -> list[ld.Diff]:
    objs = json.loads((target / "kafka.json").read_text())
    recipe = json.loads((target / "recipe.json").read_text())
    case = ld.Case(recipe, target / "kafka-logs", [o for o in objs if o.get("type") == "partition"], objs[-1])
    ld.kseg_answers(case)
    return ld.compare(case)


def write_provenance(target: Path, kind: str, made_by: str, was: str | None = None) -> None:
    """PROVENANCE.md of one fixture: what is wrong, how it was made, the disagreements, every file's sha256."""
    from test_load_vs_kafka import KNOWN_DISAGREEMENTS

    diffs = _fixture_diffs(target)
    files = sorted(p for p in target.rglob("*") if p.is_file() and p.name != "PROVENANCE.md")
    rows = "".join(f"| `{p.relative_to(target)}` | {p.stat().st_size} | `{_sha256(p)}` |\n" for p in files)
    lines = "".join(f"- `{d.dir or '(log dir)'}`: {d.describe()}\n" for d in diffs)
    why = KNOWN_DISAGREEMENTS[kind].why if kind in KNOWN_DISAGREEMENTS else "nothing any more: kseg agrees"
    if kind not in KNOWN_DISAGREEMENTS and was:
        why += f" (kept as a regression case; it was: {was})"
    (target / "PROVENANCE.md").write_text(
        f"# load-vs-kafka fixture `{kind}`\n\n"
        f"**What is wrong** (kseg's model against Kafka 4.3.0's loader): {why}.\n\n"
        f"Made by `{made_by}`: the smallest log dir of the run whose only disagreements are of this kind, "
        f"shrunk by `logdir_gen.shrink_candidates` while they stayed so, rebuilt from `recipe.json` "
        f"(`logdir_gen`: kseg's encoder wrote the .log files, Kafka's LoadLogDir the indexes, snapshots and "
        f"epoch cache, then the checkpoints, marker and damage operators of the recipe). `kafka.json` is what "
        f"LoadLogDir printed for `kafka-logs` (`--no-kafka-log --no-files`).\n\n"
        f"Disagreements (Kafka first):\n\n{lines}\n"
        f"| file | bytes | sha256 |\n|---|---|---|\n{rows}")


def refresh_provenance(root: Path) -> None:
    """Rewrite every fixture's PROVENANCE.md from the current KNOWN_DISAGREEMENTS (the command is kept)."""
    for target in sorted(p for p in root.iterdir() if (p / "kafka.json").exists()):
        old = (target / "PROVENANCE.md").read_text()
        made_by = old.split("Made by `", 1)[1].split("`", 1)[0]
        was = old.split("loader): ", 1)[1].split(".\n", 1)[0] if "loader): " in old else None
        if was and was.startswith("nothing any more"):
            was = was.split("it was: ", 1)[1].rstrip(")") if "it was: " in was else None
        write_provenance(target, target.name, made_by, was)


def save_fixtures(storage: KafkaStorage, cases: list[ld.Case], out: Path, work: Path, seed: int) -> None:
    """One minimised fixture per known kind found in ``cases``: the log dir, Kafka's verdict, the recipe."""
    from test_load_vs_kafka import classify

    picks: dict[str, ld.Case] = {}
    for case in cases:
        diffs = ld.compare(case)
        kinds = {classify(case, d) for d in diffs}
        if len(kinds) == 1 and None not in kinds:
            kind = kinds.pop()
            assert kind is not None
            if kind not in picks or len(gen.describe(case.recipe)) < len(gen.describe(picks[kind].recipe)):
                picks[kind] = case
    kinds = sorted(k for k in picks if not (out / k / "kafka.json").exists())  # existing fixtures are kept
    shrunk = minimise(storage, [(picks[k].recipe, _only_kind(k)) for k in kinds], work / "minimise")
    for kind, recipe in zip(kinds, shrunk):
        recipe["name"] = "kafka-logs"
        [case] = ld.run(storage, [recipe], work / f"fixture-{kind}")
        assert case.path is not None
        target = out / kind
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(case.path, target / "kafka-logs")
        [objs] = ld.BatchStorage(storage, work).load([target / "kafka-logs"], *ld.LOAD_OPTIONS)
        (target / "kafka.json").write_text(json.dumps(objs, indent=1, sort_keys=True) + "\n")
        (target / "recipe.json").write_text(json.dumps(recipe, indent=1, sort_keys=True) + "\n")
        write_provenance(target, kind, f"python -m tests.interop.load_diff_report --n {len(cases)} --seed {seed} "
                         f"--save-fixtures fixtures/load-vs-kafka")
        diffs = _fixture_diffs(target)
        print(f"saved {target}: {sorted({f for d in diffs for f in d.fields})}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=300, help="log directories to generate")
    parser.add_argument("--seed", type=int, default=ld.DEFAULT_SEED)
    parser.add_argument("--recipe", help="replay this one recipe (JSON) instead of generating")
    parser.add_argument("--minimise", action="store_true", help="shrink each group's recipe")
    parser.add_argument("--keep", help="build the log directories here and keep them")
    parser.add_argument("--save-fixtures", help="save one minimised fixture per known kind under this directory")
    parser.add_argument("--refresh-provenance", help="rewrite the PROVENANCE.md of every fixture under this directory")
    args = parser.parse_args(argv)

    if args.refresh_provenance:
        refresh_provenance(Path(args.refresh_provenance))
        return 0
    storage = KafkaStorage.create()
    recipes = [json.loads(args.recipe)] if args.recipe else ld.recipes(args.seed, args.n)
    root = Path(args.keep) if args.keep else ld.scratch_root(Path(tempfile.gettempdir()))
    try:
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
        for sig, found in groups.items():  # a group's example: a disagreement of no known kind first
            found.sort(key=lambda cd: known_kind(*cd) is not None)
        ordered = sorted(groups.items(), key=lambda item: -len(item[1]))
        shrunk = [found[0][0].recipe for _, found in ordered]
        if args.minimise:
            shrunk = minimise(storage, [(found[0][0].recipe, _same_signature(sig)) for sig, found in ordered],
                              root / "minimise")
        for (sig, found), recipe in zip(ordered, shrunk):
            case, diff = found[0]
            kinds = sorted({known_kind(c, d) or "NEW" for c, d in found})
            print(f"\n== {len(found)} x {' | '.join(sig)}   [{', '.join(kinds)}]")
            print(f"   {case.name} {diff.dir or '(log dir)'}: {diff.describe()}"[:2000])
            print(f"   recipe: {gen.describe(recipe)}", flush=True)
        if args.save_fixtures:
            save_fixtures(storage, cases, Path(args.save_fixtures), root / "save", args.seed)
        if args.recipe and args.keep:
            print(f"\nbuilt in {root}")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
