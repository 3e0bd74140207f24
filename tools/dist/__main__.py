"""``python -m tools.dist``: build kseg's abi3 wheel, its pure wheel, or ``kseg.pyz`` (docs/dist.md).

Exit status: 0 when the artefact was written (its path is printed), 1 when a build step failed,
2 on usage errors.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tools.dist.pyz import DEFAULT_PYTHONS, DistError, build_pyz
from tools.dist.wheels import build_abi3_wheel, build_pure_wheel

ROOT = Path(__file__).resolve().parents[2]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m tools.dist", description=__doc__)
    sub = parser.add_subparsers(dest="what", required=True)
    wheel = sub.add_parser("wheel", help="the compiled-core abi3 wheel (maturin build --release)")
    wheel.add_argument("--out", type=Path, default=ROOT / "dist")
    wheel.add_argument(
        "--manylinux2014", action="store_true",
        help="link through zig (pip install ziglang) for glibc 2.17+ hosts, not this machine's glibc",
    )
    pure = sub.add_parser("pure", help="a py3-none-any wheel without the core (no cargo needed)")
    pure.add_argument("--out", type=Path, default=ROOT / "dist")
    pyz = sub.add_parser("pyz", help="kseg.pyz: kseg, its core and its dependencies in one file")
    pyz.add_argument("--out", type=Path, default=ROOT / "dist" / "kseg.pyz")
    pyz.add_argument(
        "--kseg-wheel", type=Path, default=None,
        help="take kseg from this wheel (default: the tree's kseg/, with its built core if any)",
    )
    source = pyz.add_mutually_exclusive_group()
    source.add_argument(
        "--deps-from-site", action="store_true",
        help="copy the dependencies installed for this interpreter (a pyz for this Python version only)",
    )
    source.add_argument(
        "--wheelhouse", type=Path, default=None,
        help="take the dependencies' wheels from this directory (no index needed)",
    )
    pyz.add_argument(
        "--python", action="append", default=None, metavar="X.Y",
        help=f"CPython versions to download wheels for (repeatable; default {' '.join(DEFAULT_PYTHONS)})",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.what == "wheel":
            out = build_abi3_wheel(ROOT, args.out, manylinux2014=args.manylinux2014)
        elif args.what == "pure":
            out = build_pure_wheel(ROOT, args.out)
        else:
            out = build_pyz(
                ROOT, args.out, kseg_wheel=args.kseg_wheel, deps_from_site=args.deps_from_site,
                wheelhouse=args.wheelhouse, pythons=tuple(args.python or DEFAULT_PYTHONS),
            )
    except DistError as err:
        print(f"tools.dist: {err}", file=sys.stderr)
        return 1
    if args.what == "pyz" and not _has_core(out):
        print("tools.dist: note: no compiled core in kseg/ (pip install -e . first, or --kseg-wheel): "
              "this kseg.pyz runs pure Python", file=sys.stderr)
    print(out)
    return 0


def _has_core(pyz: Path) -> bool:
    import json
    import zipfile

    with zipfile.ZipFile(pyz) as zf:
        return bool(json.loads(zf.read("kseg-pyz.json"))["core"])


if __name__ == "__main__":
    sys.exit(main())
