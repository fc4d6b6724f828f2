// icebook metadata tree (anywidget ES module, bundled with dom.js by esbuild).
// Security: every string from the table is written with textContent or as a property, never parsed as markup.

import { fmtCount, h, safeClass } from "./dom.js";

const KIND_LABEL = {
  metadata: "metadata", group: "", snapshot: "snapshot", ref: "ref", manifest_list: "manifest list",
  manifest: "manifest", data_file: "data file", delete_file: "delete file", schema: "schema",
  spec: "spec", sort_order: "sort order", property: "property",
};

function render({ model, el }) {
  const view = Math.random().toString(36).slice(2);
  let reqCounter = 0;
  const pending = new Map(); // req -> handler
  const root = h("div", "icebook ib-tree-widget");
  const bar = h("div", "ib-toolbar");
  const title = h("span", "ib-title");
  const status = h("span", "ib-status ib-muted");
  const upButton = h("button", "ib-button", "show whole table");
  upButton.type = "button";
  upButton.addEventListener("click", () => { model.set("at", null); model.save_changes(); });
  bar.append(title, upButton, status);
  const split = h("div", "ib-split");
  const treeEl = h("div", "ib-tree");
  treeEl.setAttribute("role", "tree");
  const detailsEl = h("div", "ib-details");
  detailsEl.append(h("div", "ib-muted", "Select a node to see its raw record and what each field means."));
  split.append(treeEl, detailsEl);
  root.append(bar, split);
  el.append(root);

  function send(msg, handler) {
    const req = ++reqCounter;
    pending.set(req, handler);
    model.send({ ...msg, req, view });
  }

  function onMessage(msg) {
    if (!msg || msg.view !== view) return;
    const handler = pending.get(msg.req);
    if (!handler) return;
    pending.delete(msg.req);
    handler(msg);
  }
  model.on("msg:custom", onMessage);

  function partsEl(node) {
    const label = h("span", "ib-label");
    if (Array.isArray(node.parts) && node.parts.length) {
      for (const [text, role, meaning] of node.parts) {
        const p = h("span", "ib-part ib-part-" + safeClass(role), text);
        p.title = meaning ? `${role}: ${meaning}` : role;
        label.append(p);
      }
    } else {
      label.textContent = node.label;
    }
    return label;
  }

  function factsEl(facts) {
    const wrap = h("span", "ib-facts");
    for (const [k, v, flag] of facts || []) {
      const f = h("span", "ib-fact ib-f-" + safeClass(flag));
      f.append(h("span", "ib-fk", k), document.createTextNode(" "), h("span", "ib-fv", v));
      if (flag === "inherited") {
        const mark = h("sup", "ib-inh", "i");
        f.title = `${k} inherited: the manifest left it null, the reader supplies it (Sequence Number Inheritance)`;
        f.append(mark);
      }
      wrap.append(f);
    }
    return wrap;
  }

  function nodeEl(node) {
    const item = h("div", "ib-item");
    item.setAttribute("role", "treeitem");
    const row = h("div", "ib-row ib-kindrow-" + safeClass(node.kind));
    row.dataset.nodeId = node.id;
    row.dataset.kind = node.kind;
    const hasKids = node.n === null || node.n === undefined || node.n > 0;
    const caret = h("span", "ib-caret", hasKids ? "▸" : "");
    const kind = KIND_LABEL[node.kind] ?? node.kind;
    row.append(caret);
    if (kind) row.append(h("span", "ib-kind ib-kind-" + safeClass(node.kind), kind));
    row.append(partsEl(node));
    if (node.n) row.append(h("span", "ib-count ib-muted", `(${fmtCount(node.n)})`));
    for (const [text, cls] of node.badges || []) row.append(h("span", "ib-badge " + safeClass(cls), text));
    row.append(factsEl(node.facts));
    const kids = h("div", "ib-children");
    kids.hidden = true;
    item.append(row, kids);
    let loaded = false;
    const toggle = () => {
      if (!hasKids) return;
      if (!loaded) {
        loaded = true;
        kids.hidden = false;
        caret.textContent = "▾";
        item.setAttribute("aria-expanded", "true");
        loadPage(node.id, kids, 0);
        return;
      }
      kids.hidden = !kids.hidden;
      caret.textContent = kids.hidden ? "▸" : "▾";
      item.setAttribute("aria-expanded", String(!kids.hidden));
    };
    caret.addEventListener("click", (ev) => { ev.stopPropagation(); toggle(); });
    row.addEventListener("dblclick", toggle);
    row.addEventListener("click", () => select(node, row));
    item._toggle = toggle;
    return item;
  }

  function loadPage(id, container, offset) {
    const loading = h("div", "ib-loading ib-muted", "loading…");
    container.append(loading);
    const started = performance.now();
    send({ type: "children", id, offset }, (msg) => {
      loading.remove();
      if (msg.type === "error") { container.append(h("div", "ib-error", msg.message)); return; }
      const frag = document.createDocumentFragment();
      const items = msg.nodes.map(nodeEl);  // this page's rows only: paging stays flat however many are shown
      for (const item of items) frag.append(item);
      container.append(frag);
      const shown = msg.offset + msg.nodes.length;
      if (shown < msg.total) {
        const more = h("button", "ib-more ib-button",
          `load ${fmtCount(Math.min(model.get("page_size"), msg.total - shown))} more (${fmtCount(msg.total - shown)} not shown)`);
        more.type = "button";
        more.addEventListener("click", () => { more.remove(); loadPage(id, container, shown); });
        container.append(more);
      }
      const ms = performance.now() - started;
      root.dataset.lastLoadMs = ms.toFixed(1);
      root.dataset.lastLoadCount = String(msg.nodes.length);
      status.textContent = `last page: ${fmtCount(shown)} of ${fmtCount(msg.total)} shown · ${ms.toFixed(0)} ms (kernel ${msg.ms} ms)`;
      const auto = (model.get("expand") || []);
      for (const item of items) {
        const rowId = item.firstChild.dataset.nodeId;
        if (auto.includes(rowId) && !item._autoOpened) { item._autoOpened = true; item._toggle(); }
      }
    });
  }

  function select(node, row) {
    for (const r of treeEl.querySelectorAll(".ib-row.ib-selected")) r.classList.remove("ib-selected");
    row.classList.add("ib-selected");
    model.set("selected", node.id);
    model.save_changes();
    detailsEl.replaceChildren(h("div", "ib-muted", "loading…"));
    send({ type: "details", id: node.id }, (msg) => {
      if (msg.type === "error") { detailsEl.replaceChildren(h("div", "ib-error", msg.message)); return; }
      showDetails(msg.details);
    });
  }

  function showDetails(d) {
    const box = h("div", "ib-details-body");
    box.append(h("div", "ib-details-title", d.title));
    if (d.path) {
      const p = h("div", "ib-path");
      for (const [text, role, meaning] of d.parts || []) {
        const part = h("span", "ib-part ib-part-" + safeClass(role), text);
        part.title = meaning ? `${role}: ${meaning}` : role;
        p.append(part);
      }
      const full = h("div", "ib-muted ib-fullpath", d.path);
      box.append(p, full);
      const legend = h("div", "ib-legend");
      for (const [text, role, meaning] of d.parts || []) {
        if (!meaning || role === "separator") continue;
        const li = h("div", "ib-legend-item");
        li.append(h("span", "ib-part ib-part-" + safeClass(role), text), document.createTextNode(` ${role}: ${meaning}`));
        legend.append(li);
      }
      box.append(legend);
    }
    const table = h("table", "ib-grid ib-fields");
    const head = h("tr");
    for (const t of ["field · what the spec says", "value"]) head.append(h("th", "", t));
    table.append(head);
    for (const [name, value, doc, note] of d.rows || []) {
      const tr = h("tr");
      const f = h("td", "ib-fcell");
      f.append(h("div", "ib-fname", name));
      if (doc) f.append(h("div", "ib-muted ib-doc", doc));
      const v = h("td", "ib-fvalue", value);
      if (note) {
        v.append(h("div", "ib-note", "inherited: " + note));
        tr.classList.add("ib-inherited");
      }
      tr.append(f, v);
      table.append(tr);
    }
    box.append(table);
    detailsEl.replaceChildren(box);
  }

  function draw() {
    const at = model.get("at");
    title.textContent = at ? `snapshot ${at}` : model.get("title");
    upButton.hidden = !at;
    treeEl.replaceChildren();
    const frag = document.createDocumentFragment();
    const items = [];
    for (const node of model.get("roots") || []) { const it = nodeEl(node); items.push([node, it]); frag.append(it); }
    treeEl.append(frag);
    const auto = model.get("expand") || [];
    for (const [node, it] of items) if (auto.includes(node.id)) { it._autoOpened = true; it._toggle(); }
  }
  model.on("change:roots", draw);
  draw();
  return () => {
    model.off("msg:custom", onMessage);
    model.off("change:roots", draw);
  };
}

export default { render };
