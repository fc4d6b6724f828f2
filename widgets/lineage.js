// icebook snapshot graph (anywidget ES module). Rows and lanes come from Python; this draws SVG.
// Security: labels are set with textContent only.

import { h, safeClass, svg } from "./dom.js";

const STEP = 28;
const LANE = 18;

function render({ model, el }) {
  const root = h("div", "icebook ib-lineage-widget");
  const legend = h("div", "ib-toolbar");
  const title = h("span", "ib-title", "Snapshots");
  legend.append(title,
    h("span", "ib-muted ib-status", "newest first · thick line: current ancestry (main) · click a snapshot to explore it"));
  const wrap = h("div", "ib-lineage");
  root.append(legend, wrap);
  el.append(root);

  function draw() {
    const rows = model.get("graph") || [];
    title.textContent = `Lineage: ${rows.length} snapshot${rows.length === 1 ? "" : "s"}`;
    const lanes = model.get("lanes") || 1;
    const selected = model.get("selected_snapshot_id");
    const current = model.get("current");
    const width = lanes * LANE + 12;
    const height = Math.max(rows.length, 1) * STEP;
    const graph = svg("svg", { class: "ib-graph", width, height, viewBox: `0 0 ${width} ${height}` });
    const pos = new Map(rows.map((r) => [r.id, [r.lane * LANE + 10, r.row * STEP + STEP / 2]]));
    const onMain = new Set(rows.filter((r) => r.main).map((r) => r.id));
    for (const r of rows) {
      if (!r.parent || !pos.has(r.parent)) {
        if (r.parent_expired) {
          const [x, y] = pos.get(r.id);
          graph.append(svg("path", { class: "ib-edge ib-edge-expired", d: `M${x},${y} L${x},${y + STEP * 0.7}` }));
        }
        continue;
      }
      const [x1, y1] = pos.get(r.id);
      const [x2, y2] = pos.get(r.parent);
      const main = onMain.has(r.id) && onMain.has(r.parent);
      graph.append(svg("path", {
        class: "ib-edge" + (main ? " ib-edge-main" : ""),
        d: `M${x1},${y1} C${x1},${y1 + STEP * 0.6} ${x2},${y2 - STEP * 0.6} ${x2},${y2}`,
      }));
    }
    const list = h("div", "ib-lrows");
    for (const r of rows) {
      const [x, y] = pos.get(r.id);
      const isSel = selected !== null && selected !== undefined && String(selected) === r.id;
      const dot = svg("circle", {
        class: `ib-dot ib-op-${safeClass(r.op_class)}${r.main ? " ib-on-main" : ""}${isSel ? " ib-dot-selected" : ""}`,
        cx: x, cy: y, r: r.id === current ? 7 : 6,
      });
      dot.dataset.snapshotId = r.id;
      const tip = svg("title");
      tip.textContent = `snapshot ${r.id} (${r.op})`;
      dot.append(tip);
      dot.addEventListener("click", () => pick(r.id));
      graph.append(dot);

      const row = h("div", "ib-lrow" + (r.reachable ? "" : " ib-unreachable") + (isSel ? " ib-selected" : ""));
      row.style.height = `${STEP}px`;
      row.dataset.snapshotId = r.id;
      row.append(h("code", "ib-sid", r.id), h("span", `ib-op ib-op-${safeClass(r.op_class)}`, r.op));
      for (const b of r.branches) row.append(h("span", "ib-badge ib-branch", b));
      for (const t of r.tags) row.append(h("span", "ib-badge ib-tag", t));
      if (r.id === current) row.append(h("span", "ib-badge ib-current", "current"));
      for (const note of r.notes || []) row.append(h("span", "ib-badge", note));
      row.append(h("span", "ib-muted ib-when", `${r.when}${r.seq !== null && r.seq !== undefined ? " · seq " + r.seq : ""}`));
      if (r.summary) row.append(h("span", "ib-muted ib-sum", r.summary));
      row.title = `snapshot ${r.id}: ${r.op}, ${r.when}`;
      row.addEventListener("click", () => pick(r.id));
      list.append(row);
    }
    const g = h("div", "ib-lgraph");
    g.append(graph);
    wrap.replaceChildren(g, list);
  }

  function pick(id) {
    model.set("selected_snapshot_id", id);
    model.save_changes();
  }

  model.on("change:graph", draw);
  model.on("change:selected_snapshot_id", draw);
  draw();
  return () => {
    model.off("change:graph", draw);
    model.off("change:selected_snapshot_id", draw);
  };
}

export default { render };
