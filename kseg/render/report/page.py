"""The report page: a fixed HTML skeleton, ``report.css`` and ``report.js`` inlined, the data as JSON.

The data goes into a ``<script type="application/json">`` element with every ``<``, ``>`` and
``&`` written as a JSON escape, so no name from the evidence (a topic, a path) can close the
element or inject markup; the script puts text into the page with ``textContent`` only.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

PANELS = (
    ("treemap", "Disk usage: log dir → topic → partition → segment"),
    ("timeline", "Records and bytes over time"),
    ("formats", "Codecs and message formats"),
    ("producers", "Producers and transactions"),
    ("retention", "Retention forecast: the next deleteOldSegments pass"),
    ("verdicts", "Verify and triage verdicts"),
)


def _asset(name: str) -> str:
    return resources.files("kseg.render.report").joinpath(name).read_text(encoding="utf-8")


def embedded_json(data: Any) -> str:
    """JSON safe inside a ``<script>`` element: no ``<``, ``>`` or ``&`` left as such."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_html(data: dict[str, Any]) -> str:
    """The whole page as one string."""
    sections = "\n".join(
        f'<section class="panel" id="{key}" data-drawn="no"><h2>{title}</h2><div class="body"></div></section>'
        for key, title in PANELS
    )
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "script-src 'unsafe-inline'; img-src data:\">"
        "<title>kseg report</title>\n<style>\n" + _asset("report.css") + "\n</style></head>\n<body>\n"
        "<header><h1>kseg report</h1><p id=\"summary\"></p></header>\n<main>\n" + sections + "\n</main>\n"
        "<script type=\"application/json\" id=\"kseg-data\">" + embedded_json(data) + "</script>\n"
        "<script>\n" + _asset("report.js") + "\n</script>\n</body></html>\n"
    )
