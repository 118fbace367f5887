// Every action of the console is a v1 call with the signed-in key, so the console can do nothing the
// API would refuse. The key lives in sessionStorage only: never in a URL, a cookie or localStorage.

const KEY_ITEM = "agent-authority.console.key";
const API_BASE = "/v1";

export const session = {
  key() {
    return sessionStorage.getItem(KEY_ITEM);
  },
  set(key) {
    sessionStorage.setItem(KEY_ITEM, key);
  },
  clear() {
    sessionStorage.removeItem(KEY_ITEM);
  },
};

/** A refusal from the API: an RFC 9457 problem, or a network failure. */
export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail ?? problem?.title ?? `HTTP ${status}`);
    this.status = status;
    this.code = problem?.code ?? "network_error";
    this.problem = problem;
  }
}

/** The seed says breaker endpoints are used with `x-api-key`; the server accepts both headers everywhere. */
function authHeaders(path, key) {
  return /^\/(breakers|agents\/[^/]+\/breakers)\b/.test(path) ? { "x-api-key": key } : { authorization: `Bearer ${key}` };
}

export async function api(method, path, body) {
  const key = session.key();
  if (key === null) throw new ApiError(401, { code: "unauthenticated", title: "sign in first" });
  const headers = { accept: "application/json", ...authHeaders(path, key) };
  const init = { method, headers, credentials: "omit", cache: "no-store", redirect: "error" };
  if (body !== undefined) {
    headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(`${API_BASE}${path}`, init);
  } catch (error) {
    throw new ApiError(0, { code: "network_error", title: "the server did not answer", detail: String(error?.message ?? error) });
  }
  const text = await response.text();
  let parsed;
  try {
    parsed = text === "" ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!response.ok) throw new ApiError(response.status, parsed ?? { title: `HTTP ${response.status}` });
  return parsed;
}

/** A path segment from a value: ids go into paths percent-encoded, never raw. */
export function seg(value) {
  return encodeURIComponent(String(value));
}

/**
 * What the server serves and who may call it, read from the same endpoint table the server enforces
 * (`/console/endpoints.json`). `{}` in a path matches any parameter name.
 */
export class Capabilities {
  constructor(endpoints, me) {
    this.me = me;
    this.byRoute = new Map(endpoints.map((e) => [Capabilities.route(e.method, e.path), e]));
  }

  static route(method, path) {
    return `${method.toLowerCase()} ${path.replace(/\{[^}]*\}/g, "{}")}`;
  }

  served(method, path) {
    return this.byRoute.has(Capabilities.route(method, path));
  }

  /** Served, one of the key's roles may call it, and a human-only action is offered to humans only. */
  can(method, path) {
    const endpoint = this.byRoute.get(Capabilities.route(method, path));
    if (endpoint === undefined) return false;
    if (endpoint.roles === null) return true;
    if (!endpoint.roles.some((role) => this.me.roles.includes(role))) return false;
    return !endpoint.human || this.me.kind === "human";
  }
}

export async function loadEndpoints() {
  const response = await fetch("endpoints.json", { credentials: "omit", cache: "no-store" });
  if (!response.ok) throw new ApiError(response.status, { title: "the endpoint table is not served" });
  return (await response.json()).endpoints;
}

/** A refusal as one line of text for people: title, detail, status and stable code. */
export function problemText(error) {
  if (error instanceof ApiError) {
    const p = error.problem ?? {};
    return `${p.title ?? `HTTP ${error.status}`}${p.detail ? `: ${p.detail}` : ""} (${error.status} ${error.code})`;
  }
  return String(error?.message ?? error);
}
