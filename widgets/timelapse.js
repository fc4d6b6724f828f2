// icebook time-lapse (anywidget ES module): a scrubber over the frames (slider, step, play) driving the
// partition heatmap, the growth chart, the schema and spec in force and the commit's diff.
// The layout comes from Python (timelapse_render.timelapse_payload); this only draws the frame at `position`.
// Security: every string is set with textContent or setAttribute.

import { fmtCount, h, safeClass, svg } from "./dom.js";

const CELL = 14;
const GROWTH_W = 640;
const GROWTH_H = 180;
const PAD = 8;
const METRICS = ["files", "records", "bytes"];
const SERIES = [
  ["records", "records", "ib-tl-records"],
  ["data_files", "data files", "ib-tl-files"],
  ["bytes", "bytes", "ib-tl-bytes"],
  ["delete_files", "delete files (debt)", "ib-tl-debt"],
];

function render({ model, el }) {
  const root = h("div", "icebook ib-timelapse-widget");
  const title = h("div", "ib-h", "Time-lapse");
  const controls = h("div", "ib-tl-controls");
  const back = h("button", "ib-tl-back", "◀ step");
  const play = h("button", "ib-tl-play", "play");
  const forward = h("button", "ib-tl-forward", "step ▶");
  const slider = h("input", "ib-tl-slider");
  slider.type = "range";
  slider.min = "0";
  slider.step = "1";
  const metric = h("select", "ib-tl-metric");
  for (const m of METRICS) {
    const option = h("option", null, `heatmap: ${m}`);
    option.value = m;
    metric.append(option);
  }
  const label = h("span", "ib-tl-label");
  controls.append(back, play, forward, slider, metric);
  const legend = h("div", "ib-tl-legend");
  const panels = h("div", "ib-tl-panels");
  const heatBox = h("div", "ib-tl-heatbox");
  const growthBox = h("div", "ib-tl-growthbox");
  const side = h("div", "ib-tl-side");
  panels.append(heatBox, side);
  root.append(title, controls, label, legend, growthBox, panels);
  el.append(root);

  let timer = null;

  function frames() {
    return (model.get("payload") || {}).frames || [];
  }

  function go(i) {
    const n = frames().length;
    if (!n) return;
    const next = Math.max(0, Math.min(n - 1, i));
    model.set("position", next);
    model.save_changes();
  }

  function stop() {
    if (timer !== null) clearInterval(timer);
    timer = null;
    play.textContent = "play";
    root.dataset.playing = "false";
  }

  function start() {
    const n = frames().length;
    if (n < 2) return;
    if (model.get("position") >= n - 1) go(0);
    play.textContent = "pause";
    root.dataset.playing = "true";
    timer = setInterval(() => {
      const at = model.get("position");
      if (at >= frames().length - 1) {
        stop();
        return;
      }
      go(at + 1);
    }, Math.max(50, model.get("interval_ms") || 600));
  }

  back.addEventListener("click", () => { stop(); go(model.get("position") - 1); });
  forward.addEventListener("click", () => { stop(); go(model.get("position") + 1); });
  play.addEventListener("click", () => (timer === null ? start() : stop()));
  slider.addEventListener("input", () => { stop(); go(Number(slider.value)); });
  metric.addEventListener("change", () => { model.set("metric", metric.value); model.save_changes(); });

  function drawHeatmap(p, at) {
    const rows = p.rows || [];
    const columns = p.columns || [];
    const which = model.get("metric") || "records";
    const k = Math.max(0, METRICS.indexOf(which));
    const top = (p.max || {})[which] || 1;
    const width = Math.max(columns.length, 1) * CELL + 2;
    const height = Math.max(rows.length, 1) * CELL + 2;
    const map = svg("svg", { class: "ib-tl-heatmap", width, height, viewBox: `0 0 ${width} ${height}` });
    map.dataset.frame = String(at);
    map.dataset.metric = which;
    const f = frames()[at];
    const baseIndex = f && f.base !== null ? frames().findIndex((g) => g.id === f.base) : -1;
    const before = new Map();
    if (baseIndex >= 0) for (const c of p.cells[baseIndex] || []) before.set(`${c[0]}:${c[1]}`, c);
    for (let r = 0; r < rows.length; r++) {
      for (let c = 0; c < columns.length; c++) {
        map.append(svg("rect", { class: "ib-heat-empty", x: c * CELL + 1, y: r * CELL + 1, width: CELL - 2, height: CELL - 2 }));
      }
    }
    let total = 0;
    for (const cell of p.cells[at] || []) {
      const [r, c, files, records, bytes, deletes] = cell;
      const value = [files, records, bytes][k];
      if (value <= 0 && deletes <= 0) continue;
      total += value;
      const old = before.get(`${r}:${c}`);
      const changed = baseIndex >= 0 && (!old || old.slice(2).join() !== cell.slice(2).join());
      const rect = svg("rect", {
        class: "ib-heat" + (deletes ? " ib-heat-debt" : "") + (changed ? " ib-heat-changed" : ""),
        x: c * CELL + 1, y: r * CELL + 1, width: CELL - 2, height: CELL - 2,
        "fill-opacity": (0.15 + 0.85 * (value / top)).toFixed(3),
      });
      rect.dataset.value = String(value);
      const tip = svg("title");
      tip.textContent = `${rows[r]} ${columns[c]}: ${files} files, ${records} records, ${bytes} bytes, ${deletes} delete files`;
      rect.append(tip);
      map.append(rect);
    }
    map.dataset.total = String(total);
    const caption = h("div", "ib-muted ib-caption",
      `${which} per partition · down: ${rows.slice(0, 3).join(", ")}${rows.length > 3 ? "…" : ""} · across: ${columns.length} column(s)` +
      (p.hidden ? ` · ${p.hidden} partition states not shown` : ""));
    heatBox.replaceChildren(map, caption);
  }

  function drawGrowth(at) {
    const fs = frames();
    const n = fs.length;
    const x = (i) => PAD + (GROWTH_W - 2 * PAD) * (n > 1 ? i / (n - 1) : 0.5);
    const chart = svg("svg", { class: "ib-tl-growth", width: GROWTH_W, height: GROWTH_H, viewBox: `0 0 ${GROWTH_W} ${GROWTH_H}` });
    legend.replaceChildren();
    for (const [column, name, cls] of SERIES) {
      if (!fs.some((f) => f[column] !== null && f[column] !== undefined)) continue; // unknown (lists only)
      const values = fs.map((f) => f[column] || 0);
      const top = Math.max(0, ...values) || 1;
      const points = values.map((v, i) => `${x(i).toFixed(1)},${(GROWTH_H - PAD - (GROWTH_H - 2 * PAD) * v / top).toFixed(1)}`);
      const line = svg("polyline", { class: `ib-tl-line ${cls}`, points: points.join(" ") });
      const tip = svg("title");
      tip.textContent = name;
      line.append(tip);
      chart.append(line);
      const now = fs[at] ? fs[at][column] || 0 : 0;
      legend.append(h("span", `ib-tl-key ${cls}`, `${name}: ${fmtCount(now)}`));
    }
    const topRecords = Math.max(0, ...fs.map((f) => f.records)) || 1;
    fs.forEach((f, i) => {
      const dot = svg("circle", {
        class: `ib-dot ib-op-${safeClass(f.op_class)}` + (i === at ? " ib-dot-selected" : ""),
        cx: x(i).toFixed(1), cy: (GROWTH_H - PAD - (GROWTH_H - 2 * PAD) * f.records / topRecords).toFixed(1), r: i === at ? 6 : 4,
      });
      dot.dataset.frame = String(i);
      const tip = svg("title");
      tip.textContent = `frame ${i}: snapshot ${f.id} (${f.op})`;
      dot.append(tip);
      dot.addEventListener("click", () => { stop(); go(i); });
      chart.append(dot);
    });
    const marker = svg("line", { class: "ib-tl-marker", x1: x(at).toFixed(1), x2: x(at).toFixed(1), y1: 0, y2: GROWTH_H });
    marker.dataset.frame = String(at);
    chart.append(marker);
    growthBox.replaceChildren(chart);
  }

  function drawSide(p, f) {
    const parts = [];
    const head = h("div", "ib-tl-commit");
    head.append(h("span", `ib-op ib-op-${safeClass(f.op_class)}`, f.op), h("code", "ib-sid", f.id));
    if (f.afresh) head.append(h("span", "ib-badge", `afresh: ${f.afresh_reason}`));
    parts.push(head);
    parts.push(h("div", "ib-muted", f.when));
    parts.push(h("div", "ib-h", "This commit"));
    const diff = h("ul", "ib-tl-diff");
    diff.append(
      h("li", "ib-added", `+${fmtCount(f.added_data_files)} data files, +${fmtCount(f.added_records)} records`),
      h("li", "ib-removed", `-${fmtCount(f.removed_data_files)} data files, -${fmtCount(f.removed_records)} records`),
      h("li", "ib-changed", `delete files +${fmtCount(f.added_delete_files)} / -${fmtCount(f.removed_delete_files)}`),
      h("li", null, `manifests: ${f.manifests} (+${f.manifests_added} / -${f.manifests_removed})`),
    );
    for (const line of f.v3 || []) diff.append(h("li", "ib-tl-v3", line));
    parts.push(diff);
    parts.push(h("div", "ib-h", `Schema ${f.schema_id === null ? "?" : f.schema_id}`));
    parts.push(h("code", "ib-tl-schema", (p.schemas || {})[String(f.schema_id)] || "unknown"));
    parts.push(h("div", "ib-h", `Partition spec ${f.spec_id === null ? "?" : f.spec_id}`));
    parts.push(h("code", "ib-tl-spec", (p.specs || {})[String(f.spec_id)] || "unknown"));
    const open = h("button", "ib-tl-open", "open in workbench");
    open.addEventListener("click", () => {
      model.set("selected_snapshot_id", f.id);
      model.save_changes();
    });
    parts.push(h("div", null), open);
    side.replaceChildren(...parts);
  }

  function draw() {
    const p = model.get("payload") || {};
    const fs = p.frames || [];
    if (!fs.length) {
      title.textContent = "Time-lapse: no snapshots";
      heatBox.replaceChildren();
      growthBox.replaceChildren();
      side.replaceChildren();
      return;
    }
    const at = Math.max(0, Math.min(fs.length - 1, model.get("position") || 0));
    const f = fs[at];
    root.dataset.position = String(at);
    title.textContent = `Time-lapse: ${fs.length} frame${fs.length === 1 ? "" : "s"}`;
    slider.max = String(fs.length - 1);
    slider.value = String(at);
    metric.value = model.get("metric") || "records";
    label.textContent = `frame ${at + 1} of ${fs.length} · snapshot ${f.id} · ${f.op} · ${f.when} · ` +
      `${fmtCount(f.records)} records in ${fmtCount(f.data_files)} files, ${fmtCount(f.delete_files)} delete files`;
    drawHeatmap(p, at);
    drawGrowth(at);
    drawSide(p, f);
  }

  model.on("change:payload", draw);
  model.on("change:position", draw);
  model.on("change:metric", draw);
  draw();
  return () => {
    stop();
    model.off("change:payload", draw);
    model.off("change:position", draw);
    model.off("change:metric", draw);
  };
}

export default { render };
