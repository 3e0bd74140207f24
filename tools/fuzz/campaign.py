"""One campaign: numbered mutants, each run through its commands, failures bucketed and judged.

Mutant ``n`` of campaign seed ``s`` is drawn from ``random.Random(f"{s}:{n}")`` alone, so it is the
same bytes and the same command lines whatever the number of jobs or the order they finish in, and
a failure is reproduced from its two numbers (``--only n``).  Jobs are threads (each waits on one
kseg process at a time): ``--jobs 2`` keeps two kseg processes busy.  A campaign stops after
``--mutants`` mutants or at ``--budget`` seconds, whichever comes first; every bucket is reported
with its first (lowest-numbered) mutant, and buckets that no entry of :mod:`tools.fuzz.known`
explains are new: they fail the campaign.
"""

from __future__ import annotations

import random
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from tools.fuzz import hostile
from tools.fuzz.commands import Command, commands_for, lay_out
from tools.fuzz.contract import Failure, Limits, check, run_kseg, snapshot
from tools.fuzz.mutate import Context, Mutant, mutate
from tools.fuzz.seeds import Seed


@dataclass(frozen=True)
class Config:
    """What to run: campaign seed, how many mutants, the wall-clock budget, jobs and limits."""

    seed: int = 14
    mutants: int = 1_000_000
    budget_s: float = 150.0
    jobs: int = 2
    limits: Limits = field(default_factory=Limits)
    only: int | None = None  # run this one mutant (reproduce a failure)
    progress_s: float = 30.0  # a progress line this often (0: none)


@dataclass(frozen=True)
class Finding:
    """One failure of one run, with what is needed to reproduce it."""

    failure: Failure
    mutant_no: int
    seed: Seed
    mutant: Mutant
    command: Command


@dataclass
class Result:
    """Everything a campaign did."""

    mutants: int = 0
    runs: int = 0
    seconds: float = 0.0
    next_progress_s: float = 0.0
    findings: list[Finding] = field(default_factory=list)

    def buckets(self) -> dict[tuple[str, str, str, str], list[Finding]]:
        """Findings by bucket, each list ordered by mutant number, buckets in a stable order."""
        grouped: dict[tuple[str, str, str, str], list[Finding]] = {}
        for finding in sorted(self.findings, key=lambda f: (f.mutant_no, f.failure.key)):
            grouped.setdefault(finding.failure.key, []).append(finding)
        return dict(sorted(grouped.items()))


@dataclass(frozen=True)
class Plan:
    """Mutant ``n``: its seed, bytes and command lines."""

    number: int
    seed: Seed
    mutant: Mutant
    commands: list[Command]
    attack: str | None = None  # tools.fuzz.hostile
    attack_seed: int = 0


def plan(seeds: Sequence[Seed], campaign_seed: int, number: int) -> Plan:
    """Mutant ``number`` of the campaign, from its own random stream."""
    rng = random.Random(f"{campaign_seed}:{number}")
    seed = rng.choice(seeds)
    donors = [s.data for s in seeds if s.suffix == seed.suffix and s is not seed]
    mutant = mutate(seed.data, Context(seed.suffix, donors), rng)
    commands = commands_for(seed, rng)
    attack = hostile.draw(rng, seed.suffix)  # drawn last: the bytes and commands are those of before
    if attack is not None:
        mutant = Mutant(mutant.data, (*mutant.steps, f"hostile:{attack}"))
    return Plan(number, seed, mutant, commands, attack, rng.randrange(1 << 30))


def run_plan(job: Plan, limits: Limits, deadline: float) -> tuple[int, list[Finding]]:
    """Run every command of one mutant in a fresh directory; (runs done, findings)."""
    findings: list[Finding] = []
    runs = 0
    with tempfile.TemporaryDirectory(prefix="kseg-fuzz-") as tmp:
        paths = lay_out(job.seed, job.mutant.data, Path(tmp), job.attack, random.Random(job.attack_seed))
        before = snapshot(paths["logdir"])
        for command in job.commands:
            if time.monotonic() > deadline:
                break
            run = run_kseg(command.argv(paths), paths["out"], limits)
            runs += 1
            after = snapshot(paths["logdir"])
            failures = check(command.name, run, before, after, limits)
            findings.extend(Finding(failure, job.number, job.seed, job.mutant, command) for failure in failures)
            before = after
    return runs, findings


def run_campaign(seeds: Sequence[Seed], config: Config) -> Result:
    """Run mutants on ``config.jobs`` threads until the count or the budget is reached."""
    result = Result()
    started = time.monotonic()
    deadline = started + config.budget_s
    numbers = iter([config.only]) if config.only is not None else iter(range(config.mutants))
    lock, stop = threading.Lock(), threading.Event()

    def worker() -> None:
        while time.monotonic() < deadline and not stop.is_set():
            with lock:
                number = next(numbers, None)
            if number is None:
                return
            try:
                runs, findings = run_plan(plan(seeds, config.seed, number), config.limits, deadline)
            except BaseException:  # a bug in the fuzzer itself: stop every job and say so
                stop.set()
                raise
            with lock:
                result.mutants += 1
                result.runs += runs
                result.findings.extend(findings)
                _progress(result, started, config.progress_s)

    with ThreadPoolExecutor(max_workers=config.jobs) as pool:
        for future in [pool.submit(worker) for _ in range(config.jobs)]:
            future.result()
    result.seconds = time.monotonic() - started
    return result


def _progress(result: Result, started: float, every_s: float) -> None:
    """A line on stdout every ``every_s`` seconds, so a long run shows it is alive."""
    elapsed = time.monotonic() - started
    if every_s and elapsed >= result.next_progress_s:
        result.next_progress_s = elapsed + every_s
        buckets = len({f.failure.key for f in result.findings})
        print(f"  {elapsed:5.0f} s: {result.mutants} mutants, {result.runs} runs, {buckets} buckets", flush=True)


def first_numbers(result: Result) -> list[int]:
    """The lowest mutant number of each bucket (what to replay or save)."""
    return sorted({findings[0].mutant_no for findings in result.buckets().values()})

