"""``kseg report``: one self-contained HTML page -- styles, script and data inline, no network access.

* ``data`` -- the dict the page draws (stats, and verify/triage verdicts when run);
* ``page`` -- the page: ``report.css`` and ``report.js`` (beside this file) inlined with the data.

The page draws six panels (treemap, records over time, formats, producers, retention, verdicts);
each marks itself ``data-drawn="yes"`` when drawn, which tests/stats/test_report_browser.py checks
in headless Chromium together with the absence of any console error.
"""

from __future__ import annotations

from kseg.render.report.data import report_data
from kseg.render.report.page import render_html

__all__ = ["render_html", "report_data"]
