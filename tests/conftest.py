"""pytest configuration; shared helpers live in ``support`` (re-exported for old imports)."""

from support import *
from support import CORPUS_REAL, CORPUS_VECTORS, FIXTURES, IN_CI, REPO, SHARED, require_dir, write_file  # noqa: F401
