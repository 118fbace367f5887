// Building the page without ever parsing data as HTML: every value that came from a request is set
// with textContent or as an attribute value, never through innerHTML, and every text shown has its
// hidden characters written as escapes (hidden.js).
// @ts-check

import { showHidden } from "./hidden.js";

/**
 * What an element is built from: nodes and values shown as text, in nested lists; null, undefined
 * and false are left out (lists nest two deep).
 * @typedef {Node | string | number | boolean | null | undefined} Leaf
 * @typedef {Leaf | readonly (Leaf | readonly Leaf[])[]} Child
 * @typedef {Record<string, unknown> | null | undefined} Attributes
 */

const SVG_NS = "http://www.w3.org/2000/svg";

/**
 * @param {Element} el
 * @param {readonly Child[]} children
 */
function appendChildren(el, children) {
  for (const child of /** @type {readonly Leaf[]} */ (children.flat(Infinity))) {
    if (child === null || child === undefined || child === false) continue;
    // Whatever an agent, an upstream or a user sent is shown with its hidden characters as escapes.
    el.append(child instanceof Node ? child : document.createTextNode(showHidden(String(child))));
  }
}

/**
 * @param {Element} el
 * @param {Attributes} attrs
 */
function setAttributes(el, attrs) {
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") el.addEventListener(name.slice(2), /** @type {EventListener} */ (value));
    else if (name === "title" || name === "aria-label") el.setAttribute(name, showHidden(String(value)));
    else if (name === "class") el.setAttribute("class", Array.isArray(value) ? value.filter(Boolean).join(" ") : String(value));
    else if (name === "style" || name === "href" || name === "src") throw new Error(`attribute ${name} is not set through h()`);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
}

/**
 * An HTML element: `h("td", {class: "x"}, "text", child)`.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attributes} [attrs]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  setAttributes(el, attrs);
  appendChildren(el, children);
  return el;
}

/**
 * An SVG element, for charts drawn with attributes (the CSP forbids inline styles).
 * @param {string} tag
 * @param {Attributes} [attrs]
 * @param {...Child} children
 * @returns {SVGElement}
 */
export function svg(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  setAttributes(el, attrs);
  appendChildren(el, children);
  return el;
}

/**
 * An in-page link to a view; the hash never carries a key.
 * @param {string} hash
 * @param {Child} text
 * @param {Attributes} [attrs]
 */
export function viewLink(hash, text, attrs = {}) {
  const a = h("a", attrs, text);
  a.href = `#${encodeURIComponent(hash).replace(/%2F/g, "/")}`;
  return a;
}

/**
 * Replaces what `el` holds by `children`.
 * @template {Element} E
 * @param {E} el
 * @param {...Child} children
 * @returns {E}
 */
export function replace(el, ...children) {
  el.replaceChildren();
  appendChildren(el, children);
  return el;
}

/**
 * A value as a badge, coloured by its word (console.css).
 * @param {unknown} value
 */
export function badge(value) {
  const text = value === null || value === undefined ? "none" : String(value);
  return h("span", { class: ["badge", /^[a-z_]+$/.test(text) ? text : ""] }, text);
}

/**
 * A value of any JSON type, readable: objects as nested field lists, lists as comma lists.
 * @param {unknown} value
 * @returns {HTMLElement}
 */
export function renderValue(value) {
  if (value === null || value === undefined) return h("span", { class: "muted" }, "none");
  if (Array.isArray(value)) {
    if (value.every((v) => v === null || typeof v !== "object"))
      return h("span", { class: "mono" }, value.map(String).join(", ") || "(empty)");
    return h(
      "ol",
      {},
      value.map((v) => h("li", {}, renderValue(v))),
    );
  }
  if (typeof value === "object") return fields(Object.entries(value));
  if (typeof value === "boolean") return h("span", { class: "mono" }, value ? "true" : "false");
  // An id (`grt_…`, `agt_…`, `led_…`) is one word: it wraps whole, never inside.
  if (typeof value === "string" && /^[a-z]{3}_[0-9a-z]{26}$/.test(value)) return h("span", { class: "mono id" }, value);
  return h("span", { class: typeof value === "number" ? "mono" : undefined }, String(value));
}

/**
 * A definition list of [name, value] pairs; a value may be a Node or any JSON value.
 * @param {readonly (readonly [string, unknown])[]} pairs
 */
export function fields(pairs) {
  return h(
    "dl",
    { class: "fields" },
    pairs.map(([name, value]) => [h("dt", {}, name), h("dd", {}, value instanceof Node ? value : renderValue(value))]),
  );
}

/**
 * A message box: `error` is an alert, anything else a status.
 * @param {string} kind
 * @param {...Child} children
 */
export function message(kind, ...children) {
  return h("div", { class: kind, role: kind === "error" ? "alert" : "status" }, ...children);
}

/**
 * An amount in minor units with its currency, e.g. `2500 minor units (25.00 EUR)`.
 * @param {number | null | undefined} minor
 * @param {unknown} currency
 */
export function money(minor, currency) {
  if (minor === null || minor === undefined) return "none";
  if (typeof currency !== "string" || !/^[A-Z]{3}$/.test(currency)) return `${minor} minor units`;
  let major;
  try {
    const digits = new Intl.NumberFormat("en", { style: "currency", currency }).resolvedOptions().maximumFractionDigits ?? 2;
    major = (minor / 10 ** digits).toFixed(digits);
  } catch {
    return `${minor} minor units ${currency}`;
  }
  return `${minor} minor units (${major} ${currency})`;
}

/**
 * A timestamp as a `time` element, or `none`.
 * @param {unknown} iso
 */
export function time(iso) {
  if (typeof iso !== "string") return h("span", { class: "muted" }, "none");
  const el = h("time", { datetime: iso }, iso.replace("T", " ").replace(/\.\d+Z$/, "Z"));
  return el;
}
