"""tests/fuzz imports the fuzzer from tools/fuzz: put the repository root on sys.path."""

from __future__ import annotations

import sys
from pathlib import Path

_REPO = Path(__file__).resolve().parents[2]
if str(_REPO) not in sys.path:
    sys.path.insert(0, str(_REPO))
