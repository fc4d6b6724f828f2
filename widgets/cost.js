// icebook query cost (anywidget ES module): files read -> their row groups, read or skipped.
// The map comes from Python (cost_render.file_map). Security: every string goes in with textContent or
// as an attribute value; nothing is parsed as markup.

import { fmtCount, h } from "./dom.js";

function render({ model, el }) {
  const root = h("div", "icebook ib-cost-widget");
  const bar = h("div", "ib-toolbar");
  const title = h("span", "ib-title", "Query cost");
  const only = h("input");
  only.type = "checkbox";
  only.className = "ib-cost-only";
  const onlyLabel = h("label", "ib-muted ib-cost-only-label");
  onlyLabel.append(only, document.createTextNode(" only files with a row group skipped"));
  bar.append(title, onlyLabel,
    h("span", "ib-muted ib-status", "green: read · red: skipped · hover for why · click for the detail"));
  const summary = h("pre", "ib-explain ib-cost-summary");
  const detail = h("div", "ib-cost-detail ib-muted", "Point at a row group to see why it is read or skipped.");
  const map = h("table", "ib-grid ib-cost-map");
  const more = h("div", "ib-cost-more");
  root.append(bar, summary, detail, map, more);
  el.append(root);

  function show(file, group) {
    detail.className = "ib-cost-detail " + (group.kept ? "ib-cost-read" : "ib-cost-skipped");
    detail.replaceChildren(h("code", "", file.name), h("span", "", " · " + group.label));
    detail.title = file.path;
  }

  function draw() {
    const files = model.get("files") || [];
    const matching = model.get("matching") || 0;
    summary.textContent = model.get("summary") || "";
    only.checked = !!model.get("only_skipping");
    const selected = model.get("selected");
    const groups = files.reduce((n, f) => n + f.row_groups, 0);
    title.textContent = `Query cost: ${fmtCount(matching)} file${matching === 1 ? "" : "s"} read`;
    const head = h("tr");
    head.append(h("th", "", "file"), h("th", "", `row groups (${fmtCount(groups)} shown)`), h("th", "", "bytes read"));
    const thead = h("thead");
    thead.append(head);
    const body = h("tbody");
    for (const file of files) {
      const row = h("tr", "ib-cost-file");
      row.dataset.path = file.path;
      const name = h("td", "ib-cost-name");
      name.append(h("code", "", file.name));
      name.title = file.path;
      const cells = h("td", "ib-cost-groups");
      if (file.note !== null) {
        cells.append(h("span", "ib-muted ib-cost-note", file.note));
      }
      for (const group of file.groups) {
        const box = h("span", "ib-rg " + (group.kept ? "ib-rg-read" : "ib-rg-skipped"), group.row_group);
        box.dataset.rowGroup = String(group.row_group);
        box.dataset.kept = String(group.kept);
        box.title = group.label;
        box.tabIndex = 0;
        if (selected && selected.file_path === file.path && selected.row_group === group.row_group) {
          box.classList.add("ib-selected");
        }
        box.addEventListener("mouseenter", () => show(file, group));
        box.addEventListener("focus", () => show(file, group));
        box.addEventListener("click", () => {
          model.set("selected", { file_path: file.path, row_group: group.row_group, kept: group.kept,
            reason: group.reason, bytes_read: group.bytes_read });
          model.save_changes();
          show(file, group);
        });
        cells.append(box);
      }
      row.append(name, cells, h("td", "ib-cost-bytes", file.bytes_read_text));
      body.append(row);
    }
    map.replaceChildren(thead, body);
    more.replaceChildren();
    if (files.length < matching) {
      const button = h("button", "ib-button ib-cost-more-button",
        `Show more files (${fmtCount(files.length)} of ${fmtCount(matching)})`);
      button.addEventListener("click", () => {
        model.set("limit", files.length + 100);
        model.save_changes();
      });
      more.append(button);
    }
  }

  only.addEventListener("change", () => {
    model.set("only_skipping", only.checked);
    model.save_changes();
  });
  for (const name of ["files", "matching", "summary", "only_skipping", "selected"]) {
    model.on(`change:${name}`, draw);
  }
  draw();
}

export default { render };
