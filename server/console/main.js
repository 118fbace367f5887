// The console's shell: sign-in, the identity bar, the list of views, and the router between them.
// @ts-check

import { api, ApiError, Capabilities, loadEndpoints, problemText, session } from "./api.js";
import { h, message, replace } from "./dom.js";
import { agentsView } from "./view-agents.js";
import { breakersView, contractsView } from "./view-breakers.js";
import { gatedView, ledgerView } from "./view-decisions.js";
import { familiesView } from "./view-families.js";
import { grantsView } from "./view-grants.js";
import { pendingView } from "./view-pending.js";
import { countText, landingView, waitingCounts } from "./waiting.js";
import { listen, stopListening } from "./live.js";

/**
 * Each view: the endpoints it uses (it is served when one of them is) and the renderer. A view is
 * offered when the key may call one of them, so the console shows only what the key's roles allow.
 * @typedef {{ id: string, title: string, uses: [string, string][],
 *   render: (section: HTMLElement, ctx: import("./api.js").ViewContext) => Promise<void> }} View
 * @type {View[]}
 */
const VIEWS = [
  {
    id: "gated",
    title: "Gated decisions",
    uses: [
      ["post", "/decisions/{}/approve"],
      ["get", "/decisions/pending"],
    ],
    render: gatedView,
  },
  { id: "pending", title: "Pending grants", uses: [["get", "/grants/pending"]], render: pendingView },
  { id: "grants", title: "Grants", uses: [["get", "/grants"]], render: grantsView },
  { id: "families", title: "Grant families", uses: [["get", "/grant-families"]], render: familiesView },
  { id: "agents", title: "Agents and certificates", uses: [["get", "/agents"]], render: agentsView },
  { id: "contracts", title: "Contracts", uses: [["get", "/agents/{}/contracts"]], render: contractsView },
  { id: "breakers", title: "Breakers", uses: [["get", "/agents/{}/breakers/counterfactual"]], render: breakersView },
  {
    id: "ledger",
    title: "Decision ledger",
    uses: [
      ["get", "/ledger/verify"],
      ["get", "/grants/{}/ledger"],
    ],
    render: ledgerView,
  },
];

// Both are asked only while a key is signed in, when `caps` is set.
/** @type {(view: View) => boolean} */
const served = (view) => view.uses.some(([method, path]) => /** @type {Capabilities} */ (caps).served(method, path));
/** @type {(view: View) => boolean} */
const usable = (view) => view.uses.some(([method, path]) => /** @type {Capabilities} */ (caps).can(method, path));

// index.html has each of these elements.
const main = /** @type {HTMLElement} */ (document.getElementById("main"));
const nav = /** @type {HTMLElement} */ (document.getElementById("views"));
const identity = /** @type {HTMLElement} */ (document.getElementById("identity"));
/** @type {Capabilities | null} */
let caps = null;
/**
 * What waits for the key, by view id (waiting.js); read on each navigation and after each approval.
 * @type {import("./waiting.js").CountsByView}
 */
let counts = {};

function signOut() {
  stopListening();
  session.clear();
  caps = null;
  replace(identity);
  replace(nav);
  showSignIn();
}

/**
 * The sign-in form, with `note` as an error above it.
 * @param {string} [note]
 */
function showSignIn(note) {
  const input = h("input", {
    type: "password",
    name: "key",
    autocomplete: "off",
    spellcheck: "false",
    required: true,
    id: "key",
    "aria-label": "API key",
  });
  const form = h(
    "form",
    { class: "card signin", id: "signin" },
    h("h2", {}, "Sign in"),
    h("p", { class: "muted" }, "Paste your API key. It is kept in this tab's session storage only and sent as a header with each request."),
    h("label", {}, "API key", input),
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Sign in")),
    note ? message("error", note) : null,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    session.set(input.value.trim());
    input.value = "";
    await start();
  });
  replace(main, form);
  input.focus();
}

/**
 * Who is signed in, and the sign-out button.
 * @param {import("./api.js").Me} me
 */
function showIdentity(me) {
  replace(
    identity,
    h("span", { class: "who", id: "who" }, me.identity),
    h("span", { class: "tag", id: "kind" }, me.kind),
    h("span", { class: "tag", id: "roles" }, me.roles.join(", ")),
    me.agent_id ? h("span", { class: "tag" }, `agent ${me.agent_id}`) : null,
    h("button", { type: "button", class: "secondary", id: "signout", onclick: signOut }, "Sign out"),
  );
}

/**
 * A view's title with what waits in it, as a count badge (`aria-label` reads it as words).
 * @param {View} view
 */
function navTitle(view) {
  const waiting = counts[view.id];
  if (waiting === undefined || waiting === null) return [view.title];
  const text = countText(waiting);
  return [
    view.title,
    " ",
    h("span", { class: ["count", waiting.count > 0 ? "waiting" : ""], "data-count": view.id, "aria-label": `${text} waiting` }, text),
  ];
}

/**
 * The list of views, `current` marked.
 * @param {string | undefined} current
 */
function showNav(current) {
  replace(
    nav,
    VIEWS.filter((view) => !served(view) || usable(view)).map((view) => {
      const a = h(
        "a",
        {
          "data-view": view.id,
          class: served(view) ? undefined : "unserved",
          "aria-current": view.id === current ? "page" : undefined,
          title: served(view) ? undefined : "this server does not serve this yet",
        },
        navTitle(view),
      );
      a.href = `#${view.id}`;
      return a;
    }),
  );
}

/** Reads what waits for the key again and redraws the navigation's counts. */
async function recount() {
  if (caps === null) return;
  counts = await waitingCounts(caps);
  const current = nav.querySelector("a[aria-current=page]")?.getAttribute("data-view") ?? undefined;
  showNav(current);
}

/**
 * Names each table cell by its column, for the stacked tables of a narrow screen (console.css).
 * @param {HTMLElement} root
 */
function labelCells(root) {
  for (const table of root.querySelectorAll("table")) {
    const names = Array.from(table.querySelectorAll("thead th"), (th) => th.textContent ?? "");
    for (const row of table.querySelectorAll("tbody tr")) {
      Array.from(row.children).forEach((td, i) => {
        if (!td.hasAttribute("data-label") && names[i]) td.setAttribute("data-label", names[i]);
      });
    }
  }
}

async function route() {
  if (caps === null) return;
  counts = await waitingCounts(caps);
  const [id, ...rest] = location.hash.replace(/^#/, "").split("/");
  // No view asked for: land on what waits for this key, else on the first view it may use.
  const view =
    VIEWS.find((v) => v.id === id) ?? VIEWS.find((v) => v.id === landingView(counts) && usable(v)) ?? VIEWS.find(usable) ?? VIEWS[0];
  showNav(view.id);
  const section = h("section", { id: `view-${view.id}`, "aria-busy": "true" }, h("h2", {}, view.title));
  replace(main, section);
  if (served(view) && !usable(view)) {
    section.append(message("notice", "Your roles do not include this view."));
    section.setAttribute("aria-busy", "false");
    return;
  }
  try {
    await view.render(section, { caps, args: rest.map(decodeURIComponent), refresh: route, recount });
    labelCells(section);
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      signOut();
      return;
    }
    section.append(message("error", problemText(error)));
  }
  section.setAttribute("aria-busy", "false");
}

async function start() {
  if (session.key() === null) {
    showSignIn();
    return;
  }
  try {
    const [endpoints, me] = await Promise.all([loadEndpoints(), /** @type {Promise<import("./api.js").Me>} */ (api("GET", "/whoami"))]);
    caps = new Capabilities(endpoints, me);
    showIdentity(me);
    listen(/** @type {string} */ (session.key()));
    await route();
  } catch (error) {
    session.clear();
    caps = null;
    showSignIn(error instanceof ApiError && error.status === 401 ? "That key is unknown or revoked." : problemText(error));
  }
}

window.addEventListener("hashchange", () => {
  void route();
});

/**
 * The type of an `authority-event` (live.js): its detail is the event as the server sent it.
 * @param {Event} event
 * @returns {string | undefined}
 */
function eventType(event) {
  const detail = event instanceof CustomEvent ? event.detail : undefined;
  return detail?.type;
}

/**
 * The views whose lists an event changes, redrawn when one arrives (live.js): gated decisions and
 * pending grants appear and disappear without a reload. A view with a field being typed into is
 * left alone, so that an approval note is never lost.
 */
/** @type {Record<string, Set<string | undefined>>} */
const LIVE_VIEWS = {
  pending: new Set(["grant.issued", "grant.approved", "grant.revoked"]),
  gated: new Set(["decision.gated", "decision.approved", "grant.revoked", "grant.approved"]),
};
/** @type {ReturnType<typeof setTimeout> | undefined} */
let redraw;
window.addEventListener("authority-event", (event) => {
  const current = document.querySelector("main > section")?.id?.replace(/^view-/, "");
  if (!LIVE_VIEWS[current ?? ""]?.has(eventType(event))) return;
  const active = /** @type {(Element & { value?: unknown }) | null} */ (document.activeElement);
  if (active?.closest?.("main form") && active.value) return;
  clearTimeout(redraw);
  redraw = setTimeout(() => {
    void route();
  }, 100);
});

/** The navigation's counts follow the same events, whatever view is open. */
/** @type {Set<string | undefined>} */
const COUNTED = new Set([...LIVE_VIEWS.pending, ...LIVE_VIEWS.gated]);
/** @type {ReturnType<typeof setTimeout> | undefined} */
let recounting;
window.addEventListener("authority-event", (event) => {
  if (!COUNTED.has(eventType(event))) return;
  clearTimeout(recounting);
  recounting = setTimeout(() => {
    void recount();
  }, 100);
});
void start();
