"""pytest configuration; shared helpers live in ``support``.

Property tests are random on a developer's machine (new inputs every run) and
derandomized under CI, so a CI run is repeatable: a failure found locally is
pinned with ``@example`` rather than left to chance.
"""

from hypothesis import settings
from support import IN_CI

settings.register_profile("ci", derandomize=True, print_blob=True)
if IN_CI:
    settings.load_profile("ci")
