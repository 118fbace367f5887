// Every action of the console is a v1 call with the signed-in key, so the console can do nothing the
// API would refuse. The key lives in sessionStorage only: never in a URL, a cookie or localStorage.
// @ts-check

/**
 * The bodies of v1 as far as the console reads them (the server's JSON Schemas in packages/api are
 * the authority). A field the console reads only tolerantly, as one of several spellings, is optional.
 * @typedef {{ type?: string, title?: string, status?: number, detail?: string, code?: string }} Problem
 * @typedef {{ identity: string, kind: string, roles: string[], agent_id?: string | null }} Me
 * @typedef {{ method: string, path: string, roles: string[] | null, human?: boolean }} Endpoint
 * @typedef {{ id: string, name: string, description?: string | null, created_at?: string, created_by?: string }} Agent
 * @typedef {{ agents: Agent[] }} AgentList
 * @typedef {{ [field: string]: unknown, id: string, status: string, environment?: string, issued_by?: string,
 *   issued_by_email?: string | null, issued_at?: string, basis?: string, revoked_at?: string | null, revoked_by?: string | null,
 *   revocation_reason?: string | null }} Certificate
 * @typedef {{ certified: boolean, environment?: string, certificates: Certificate[] }} CertificationStatus
 * @typedef {{ [field: string]: unknown, id: string, agent_id: string, status: string, enforcement_mode?: string, principal_type?: string,
 *   principal_id?: string, scope?: { tool?: string[] }, budget_amount_minor?: number | null, budget_currency?: string | null,
 *   budget_count?: number | null, issued_at?: string, issued_by?: string, policy?: string, uses?: number, held_minor?: number,
 *   settled_minor?: number }} Grant
 * @typedef {{ grants: Grant[], next_cursor: string | null }} GrantPage
 * @typedef {{ approved_by?: string, approved_at?: string, status?: string }} GrantApproval
 * @typedef {{ gate: string, result?: string, code?: string | null, reason?: string | null }} GateResult
 * @typedef {{ tool?: string, amount_minor?: number | null, currency?: string | null, args?: unknown, grant_id?: string }} ActionRequest
 * @typedef {{ reason?: string, waited_ms: number, abandoned_at?: string }} Abandonment
 * @typedef {{ ledger_id: string, outcome?: string, agent_id?: string | null, agent_name?: string | null, grant_id?: string | null,
 *   tool?: string | null, amount_minor?: number | null, currency?: string | null, request?: ActionRequest, decided_at?: string,
 *   reason?: string | null, residual?: string | null, gates?: GateResult[], caller_admitted?: boolean, abandoned?: Abandonment | null }} PendingDecision
 * @typedef {{ decisions: PendingDecision[], next_after?: string | null }} PendingDecisionList
 * @typedef {{ approval_id: string, grant_id?: string, tool?: string, amount_minor_max?: number | null, currency?: string | null,
 *   approver?: string, expires_at?: string }} DecisionApproval
 * @typedef {{ decision_ledger_id?: string, amount_minor?: number, held_minor?: number, released_minor?: number, currency?: string,
 *   settled_by?: string }} Settlement
 * @typedef {{ ledger_id: string, kind?: string, seq?: number, hash?: string, grant_id?: string | null, outcome?: string,
 *   would_outcome?: string | null, tool?: string, amount_minor?: number | null, currency?: string | null, mode?: string,
 *   enforcement_mode?: string, approver?: string | null, reason?: string | null, decided_at?: string, at?: string,
 *   residual?: string | null, gates?: GateResult[], request?: ActionRequest, settlement?: Settlement }} LedgerRecord
 * @typedef {{ ok: boolean, trees?: number, records?: number,
 *   broken?: { tree_id?: string, seq?: number, ledger_id?: string, problem?: string } | null }} LedgerVerification
 * @typedef {{ tree_id?: string, root_id?: string, verification?: LedgerVerification, records?: LedgerRecord[] }} LedgerTree
 * @typedef {{ lower?: unknown, upper?: unknown }} Interval
 * @typedef {Interval & { id: string, metric?: string, ceiling?: unknown, rate?: unknown, status?: string, declared_by?: string | null,
 *   window_decisions?: number | null, window_hours?: number | null, n?: number | null, interval?: Interval, wilson?: Interval,
 *   wilson_interval?: Interval }} Contract
 * @typedef {{ contracts?: Contract[] }} ContractList
 * @typedef {{ at?: string, mode?: string, action?: string, performed?: boolean, declared_by?: string, grant_ids?: string[],
 *   ledger_id?: string }} Trip
 * @typedef {{ id: string, breaker_id?: string, mode?: string, action?: string, contract_id?: string | null, contract?: Contract,
 *   declared_by?: string | null, created_by?: string | null, armed_at?: string | null, armed_by?: string | null, basis?: string | null,
 *   trips?: Trip[], trip_history?: Trip[] }} Breaker
 * @typedef {{ breaker_id: string, trips: number, trip_times?: string[] }} CounterfactualEntry
 * @typedef {{ window_days?: number, breakers?: CounterfactualEntry[] }} Counterfactual
 */

/**
 * What a view is drawn with: what the key may do, the view's arguments from the hash, and how to
 * draw the view again or count what waits again.
 * @typedef {{ caps: Capabilities, args: string[], refresh: () => Promise<void>, recount: () => Promise<void> }} ViewContext
 */

const KEY_ITEM = "agent-authority.console.key";
const API_BASE = "/v1";

export const session = {
  key() {
    return sessionStorage.getItem(KEY_ITEM);
  },
  /** @param {string} key */
  set(key) {
    sessionStorage.setItem(KEY_ITEM, key);
  },
  clear() {
    sessionStorage.removeItem(KEY_ITEM);
  },
};

/** A refusal from the API: an RFC 9457 problem, or a network failure. */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {Problem | undefined} problem
   */
  constructor(status, problem) {
    super(problem?.detail ?? problem?.title ?? `HTTP ${status}`);
    this.status = status;
    this.code = problem?.code ?? "network_error";
    this.problem = problem;
  }
}

/**
 * The seed says breaker endpoints are used with `x-api-key`; the server accepts both headers everywhere.
 * @param {string} path
 * @param {string} key
 * @returns {Record<string, string>}
 */
function authHeaders(path, key) {
  return /^\/(breakers|agents\/[^/]+\/breakers)\b/.test(path) ? { "x-api-key": key } : { authorization: `Bearer ${key}` };
}

/**
 * The body of a v1 answer, of the type the caller names (the server's schema is the authority).
 * @template [T=unknown]
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<T>}
 */
export async function api(method, path, body) {
  const key = session.key();
  if (key === null) throw new ApiError(401, { code: "unauthenticated", title: "sign in first" });
  /** @type {Record<string, string>} */
  const headers = { accept: "application/json", ...authHeaders(path, key) };
  /** @type {RequestInit} */
  const init = { method, headers, credentials: "omit", cache: "no-store", redirect: "error" };
  if (body !== undefined) {
    headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(`${API_BASE}${path}`, init);
  } catch (error) {
    throw new ApiError(0, { code: "network_error", title: "the server did not answer", detail: errorText(error) });
  }
  const text = await response.text();
  /** @type {unknown} */
  let parsed;
  try {
    parsed = text === "" ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!response.ok)
    throw new ApiError(response.status, /** @type {Problem | undefined} */ (parsed) ?? { title: `HTTP ${response.status}` });
  return /** @type {T} */ (parsed);
}

/**
 * A path segment from a value: ids go into paths percent-encoded, never raw.
 * @param {unknown} value
 */
export function seg(value) {
  return encodeURIComponent(String(value));
}

/**
 * What the server serves and who may call it, read from the same endpoint table the server enforces
 * (`/console/endpoints.json`). `{}` in a path matches any parameter name.
 */
export class Capabilities {
  /**
   * @param {Endpoint[]} endpoints
   * @param {Me} me
   */
  constructor(endpoints, me) {
    this.me = me;
    this.byRoute = new Map(endpoints.map((e) => [Capabilities.route(e.method, e.path), e]));
  }

  /**
   * @param {string} method
   * @param {string} path
   */
  static route(method, path) {
    return `${method.toLowerCase()} ${path.replace(/\{[^}]*\}/g, "{}")}`;
  }

  /**
   * @param {string} method
   * @param {string} path
   */
  served(method, path) {
    return this.byRoute.has(Capabilities.route(method, path));
  }

  /**
   * Served, one of the key's roles may call it, and a human-only action is offered to humans only.
   * @param {string} method
   * @param {string} path
   */
  can(method, path) {
    const endpoint = this.byRoute.get(Capabilities.route(method, path));
    if (endpoint === undefined) return false;
    if (endpoint.roles === null) return true;
    if (!endpoint.roles.some((role) => this.me.roles.includes(role))) return false;
    return !endpoint.human || this.me.kind === "human";
  }
}

/** @returns {Promise<Endpoint[]>} */
export async function loadEndpoints() {
  const response = await fetch("endpoints.json", { credentials: "omit", cache: "no-store" });
  if (!response.ok) throw new ApiError(response.status, { title: "the endpoint table is not served" });
  return (await response.json()).endpoints;
}

/**
 * A refusal as one line of text for people: title, detail, status and stable code.
 * @param {unknown} error
 */
export function problemText(error) {
  if (error instanceof ApiError) {
    const p = error.problem ?? {};
    return `${p.title ?? `HTTP ${error.status}`}${p.detail ? `: ${p.detail}` : ""} (${error.status} ${error.code})`;
  }
  return errorText(error);
}

/**
 * An error's message, or the thrown value as text.
 * @param {unknown} error
 */
function errorText(error) {
  const text = typeof error === "object" && error !== null && "message" in error ? error.message : undefined;
  return String(text ?? error);
}
