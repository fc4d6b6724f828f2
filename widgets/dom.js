// Helpers shared by icebook's widget modules (tree.js, lineage.js).
// Security: text goes in with textContent and attributes with setAttribute; nothing is parsed as markup.
// Imported by each widget module; esbuild bundles it into each (icebook/widgets/static), since anywidget
// loads a module from a blob URL, where a relative import has nothing to resolve against.

export const SVG_NS = "http://www.w3.org/2000/svg";

/** An HTML element with an optional class and text. */
export function h(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

/** An SVG element with attributes. */
export function svg(tag, attrs) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  return e;
}

/** A value safe to use inside a class name (table strings reach class names as CSS modifiers). */
export function safeClass(s) {
  return String(s || "").replace(/[^a-zA-Z0-9_-]/g, "");
}

/** 12345 -> "12,345". */
export function fmtCount(n) {
  return Number(n).toLocaleString("en-US");
}
