"use strict";
// kseg report: draws every panel from the JSON in #kseg-data. No network, no external code.
(function () {
  const data = JSON.parse(document.getElementById("kseg-data").textContent);
  const SVG = "http://www.w3.org/2000/svg";

  function el(tag, attrs, text) {
    const node = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function bytes(n) {
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0, v = n;
    while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return i === 0 ? v + " B" : v.toFixed(1) + " " + units[i];
  }
  function num(n) { return (n === null || n === undefined) ? "-" : Number(n).toLocaleString("en-US"); }
  function date(ms) { return ms === null || ms === undefined ? "-" : new Date(ms).toISOString().slice(0, 19) + "Z"; }
  function hue(name) {
    let h = 0;
    for (const c of name) h = (h * 31 + c.charCodeAt(0)) % 360;
    return "hsl(" + h + ",55%,50%)";
  }
  function table(head, rows, numeric) {
    const t = el("table"), tr = el("tr");
    head.forEach((h, i) => tr.appendChild(el("th", numeric && numeric[i] ? { class: "n" } : {}, h)));
    t.appendChild(el("thead")).appendChild(tr);
    const body = t.appendChild(el("tbody"));
    for (const row of rows) {
      const r = body.appendChild(el("tr"));
      row.forEach((cell, i) => {
        const td = r.appendChild(el("td", numeric && numeric[i] ? { class: "n" } : {}));
        if (cell instanceof Node) td.appendChild(cell); else td.textContent = cell === null ? "-" : String(cell);
      });
    }
    return t;
  }
  function bar(frac, width) {
    return el("span", { class: "bar", style: "width:" + Math.max(1, Math.round(frac * (width || 120))) + "px" });
  }
  function panel(id, draw) {
    const section = document.getElementById(id);
    draw(section.querySelector(".body"));
    section.setAttribute("data-drawn", "yes");
  }

  // -- treemap: squarified layout, nested four levels ----------------------------------------------------
  function worst(row, side) {
    const sum = row.reduce((s, r) => s + r.a, 0), max = Math.max(...row.map(r => r.a)), min = Math.min(...row.map(r => r.a));
    return Math.max(side * side * max / (sum * sum), (sum * sum) / (side * side * min));
  }
  function squarify(nodes, x, y, w, h) {
    const items = nodes.filter(n => n.size > 0).sort((a, b) => b.size - a.size);
    const total = items.reduce((s, n) => s + n.size, 0);
    const out = [];
    if (!total || w <= 0 || h <= 0) return out;
    let rest = items.map(n => ({ node: n, a: n.size * w * h / total }));
    while (rest.length) {
      const side = Math.min(w, h);
      let row = [rest[0]], i = 1;
      while (i < rest.length && worst(row.concat([rest[i]]), side) <= worst(row, side)) { row.push(rest[i]); i++; }
      rest = rest.slice(i);
      const thick = row.reduce((s, r) => s + r.a, 0) / side;
      let off = 0;
      for (const r of row) {
        const len = r.a / thick;
        out.push(w >= h ? { node: r.node, x: x, y: y + off, w: thick, h: len }
                        : { node: r.node, x: x + off, y: y, w: len, h: thick });
        off += len;
      }
      if (w >= h) { x += thick; w -= thick; } else { y += thick; h -= thick; }
    }
    return out;
  }
  function drawTree(svg, nodes, x, y, w, h, level, color, path) {
    for (const r of squarify(nodes, x, y, w, h)) {
      const c = level === 1 ? hue(r.node.name) : color;
      const rect = el("svg:rect", { x: r.x, y: r.y, width: Math.max(0, r.w), height: Math.max(0, r.h), class: "l" + level });
      if (level > 0) rect.setAttribute("fill", c);
      rect.appendChild(el("svg:title", {}, path.concat([r.node.name]).join(" / ") + ": " + bytes(r.node.size)));
      svg.appendChild(rect);
      const label = r.w > 60 && r.h > 16 && level < 3;
      if (label) svg.appendChild(el("svg:text", { x: r.x + 4, y: r.y + 12 }, r.node.name.slice(0, Math.floor(r.w / 7))));
      if (r.node.children && r.node.children.length && r.w > 8 && r.h > 8) {
        const top = label ? 16 : 2;
        drawTree(svg, r.node.children, r.x + 2, r.y + top, r.w - 4, r.h - top - 2, level + 1, c, path.concat([r.node.name]));
      }
    }
  }
  panel("treemap", body => {
    const W = 1200, H = 460;
    const svg = el("svg:svg", { viewBox: "0 0 " + W + " " + H, class: "tm", role: "img" });
    const total = data.tree.reduce((s, d) => s + d.children.reduce((t, tp) => t + tp.children.reduce((u, p) => u + p.size, 0), 0), 0);
    const roots = data.tree.map(d => ({ name: d.name, size: d.children.reduce((t, tp) => t + tp.children.reduce((u, p) => u + p.size, 0), 0),
      children: d.children.map(tp => ({ name: tp.name, size: tp.children.reduce((u, p) => u + p.size, 0), children: tp.children })) }));
    drawTree(svg, roots, 0, 0, W, H, 0, null, []);
    body.appendChild(svg);
    body.appendChild(el("p", { class: "muted" }, bytes(total) + " in " + data.tree.length + " log dir(s); hover a box for its name and size."));
  });

  // -- records and bytes over time ------------------------------------------------------------------------
  function buckets(series, n) {
    if (!series.length) return { first: 0, span: 1, recs: [], bytes: [] };
    const first = series[0][0], last = series[series.length - 1][0];
    const span = Math.max(3600000, Math.ceil((last - first + 3600000) / n));
    const count = Math.min(n, Math.floor((last - first) / span) + 1);
    const recs = new Array(count).fill(0), by = new Array(count).fill(0);
    for (const [t, r, b] of series) { const i = Math.min(count - 1, Math.floor((t - first) / span)); recs[i] += r; by[i] += b; }
    return { first: first, span: span, recs: recs, bytes: by };
  }
  panel("timeline", body => {
    const all = data.timeline.all;
    if (!all.length) { body.appendChild(el("p", { class: "muted" }, "No timestamps (magic 0 only, or no batches).")); return; }
    const W = 560, H = 200, b = buckets(all, 80), n = b.recs.length;
    const maxR = Math.max(...b.recs, 1), maxB = Math.max(...b.bytes, 1), bw = (W - 40) / n;
    const svg = el("svg:svg", { viewBox: "0 0 " + W + " " + (H + 30), role: "img" });
    b.recs.forEach((r, i) => {
      const h = (H - 10) * r / maxR;
      const rect = el("svg:rect", { x: 30 + i * bw, y: H - h, width: Math.max(1, bw - 1), height: h, fill: "#3b6fd4" });
      rect.appendChild(el("svg:title", {}, date(b.first + i * b.span) + ": " + num(r) + " records, " + bytes(b.bytes[i])));
      svg.appendChild(rect);
    });
    const pts = b.bytes.map((v, i) => (30 + i * bw + bw / 2).toFixed(1) + "," + (H - (H - 10) * v / maxB).toFixed(1)).join(" ");
    svg.appendChild(el("svg:polyline", { points: pts, fill: "none", stroke: "#c0362c", "stroke-width": 1.5 }));
    svg.appendChild(el("svg:line", { x1: 30, y1: H, x2: W - 10, y2: H, stroke: "#667085" }));
    svg.appendChild(el("svg:text", { x: 30, y: H + 16 }, date(b.first).slice(0, 10)));
    svg.appendChild(el("svg:text", { x: W - 90, y: H + 16 }, date(b.first + (n - 1) * b.span).slice(0, 10)));
    svg.appendChild(el("svg:text", { x: 0, y: 12 }, num(maxR)));
    body.appendChild(svg);
    const legend = body.appendChild(el("p", { class: "legend" }));
    const a = legend.appendChild(el("span")); a.appendChild(el("i", { style: "background:#3b6fd4" })); a.appendChild(document.createTextNode("records (by batch maxTimestamp)"));
    const c = legend.appendChild(el("span")); c.appendChild(el("i", { style: "background:#c0362c" })); c.appendChild(document.createTextNode("bytes"));
    const rows = Object.entries(data.timeline.topics).map(([t, s]) => [t, num(s.reduce((x, v) => x + v[1], 0)), date(s[0][0]), date(s[s.length - 1][0])]);
    body.appendChild(table(["topic", "records", "first hour", "last hour"], rows, [false, true, false, false]));
  });

  // -- codecs and formats ---------------------------------------------------------------------------------
  function breakdown(title, counts, fmt) {
    const entries = Object.entries(counts).sort((a, b) => b[1] - a[1]);
    const total = entries.reduce((s, e) => s + e[1], 0) || 1;
    return [el("h3", {}, title), table(["", "", "share"], entries.map(([k, v]) => [k, fmt(v), (function () {
      const span = el("span"); span.appendChild(bar(v / total)); span.appendChild(document.createTextNode(" " + (100 * v / total).toFixed(1) + "%")); return span;
    })()]), [false, true, false])];
  }
  panel("formats", body => {
    const f = data.formats;
    for (const part of [breakdown("codec, by bytes on disk", f.codec_bytes, bytes), breakdown("codec, by batches", f.codecs, num),
                        breakdown("magic (message format), by batches", f.magics, num),
                        breakdown("timestamp type, by batches", f.timestamp_types, num)]) part.forEach(n => body.appendChild(n));
    const old = (f.magics["0"] || 0) + (f.magics["1"] || 0);
    body.appendChild(el("p", { class: old ? "warning" : "muted" }, old ? num(old) + " batches in magic 0/1 (V0/V1): Kafka 4.x brokers still read them, producers cannot write them." : "Every batch is magic 2."));
  });

  // -- producers and transactions -------------------------------------------------------------------------
  panel("producers", body => {
    const rows = data.topics.map(t => {
      const share = t.batches ? t.idempotent_batches / t.batches : 0, tx = t.batches ? t.transactional_batches / t.batches : 0;
      const s = el("span"); s.appendChild(bar(share, 60)); s.appendChild(document.createTextNode(" " + (100 * share).toFixed(0) + "%"));
      return [t.topic, num(t.producers), s, (100 * tx).toFixed(0) + "%", num(t.transactions.committed), num(t.transactions.aborted),
              num(t.transactions.open), num(t.control_batches)];
    });
    body.appendChild(el("div", { class: "scroll" })).appendChild(table(["topic", "producers", "idempotent", "transactional", "committed", "aborted", "open", "control"],
      rows, [false, true, false, true, true, true, true, true]));
    if (data.producer_activity.length) {
      body.appendChild(el("h3", {}, "most active producers"));
      body.appendChild(el("div", { class: "scroll" })).appendChild(table(["producer id", "batches", "records", "first batch", "last batch"],
        data.producer_activity.map(p => [p.producer_id, num(p.batches), num(p.records), date(p.first_timestamp), date(p.last_timestamp)]),
        [true, true, true, false, false]));
    }
  });

  // -- retention forecast ---------------------------------------------------------------------------------
  panel("retention", body => {
    const freed = data.retention.reduce((s, r) => s + r.bytes_freed, 0);
    body.appendChild(el("p", {}, "At " + date(data.now) + " the next pass frees " + bytes(freed) + " in " +
      data.retention.filter(r => r.deletes.length).length + " of " + data.retention.length + " partitions."));
    const rows = data.retention.map(r => [r.partition, r.cleanup_policy || "(empty)", num(r.retention_ms), num(r.deletes.length),
      bytes(r.bytes_freed), num(r.new_log_start_offset), r.held.length ? "segment " + r.held[0].base_offset + ": " + r.held[0].why : "-"]);
    body.appendChild(el("div", { class: "scroll" })).appendChild(table(["partition", "policy", "retention.ms", "deletes", "frees", "log start after", "first segment kept, and why"],
      rows, [false, false, true, true, true, true, false]));
  });

  // -- verify / triage ------------------------------------------------------------------------------------
  panel("verdicts", body => {
    if (!data.verify && !data.triage) {
      body.appendChild(el("p", { class: "muted" }, "Not run: kseg report --with-verify adds verify's findings and triage's prediction of the next broker start."));
      return;
    }
    if (data.verify) {
      const s = data.verify.summary;
      body.appendChild(el("p", { class: s.errors ? "error" : (s.warnings ? "warning" : "ok") },
        "verify: " + num(s.files) + " files, " + num(s.errors) + " errors, " + num(s.warnings) + " warnings (exit " + data.verify.exit_code + ")"));
      if (data.verify.findings.length) {
        body.appendChild(el("div", { class: "scroll" })).appendChild(table(["severity", "kind", "file", "byte", "what"],
          data.verify.findings.map(f => [f.severity, f.kind, f.path, f.position, f.message]), [false, false, false, true, false]));
        if (data.verify.more) body.appendChild(el("p", { class: "muted" }, "... and " + num(data.verify.more) + " more (kseg verify lists them all)"));
      }
    }
    if (data.triage) {
      const bad = data.triage.partitions.filter(p => p.problem);
      body.appendChild(el("p", { class: data.triage.broker_stops ? "error" : (bad.length ? "warning" : "ok") },
        "triage: " + (data.triage.broker_stops ? "the broker does not start; " : "") + bad.length + " of " + data.triage.partitions.length + " partitions lose or change data at the next start"));
      body.appendChild(el("div", { class: "scroll" })).appendChild(table(["partition", "outcome", "truncated", "deleted", "next"],
        data.triage.partitions.map(p => [p.path, p.outcome, bytes(p.truncated_bytes), bytes(p.deleted_bytes), p.next.join("; ") || "-"]),
        [false, false, true, true, false]));
    } else if (data.triage_skipped) {
      body.appendChild(el("p", { class: "muted" }, "triage: " + data.triage_skipped));
    }
  });

  const total = data.log_dirs.reduce((s, d) => s + d.bytes, 0), parts = data.log_dirs.reduce((s, d) => s + d.partitions, 0);
  document.getElementById("summary").textContent = data.paths.join(", ") + ": " + bytes(total) + ", " + num(parts) + " partitions, " +
    num(data.topics.length) + " topics; generated " + date(data.now);
  document.body.setAttribute("data-drawn", "yes");
})();
