// The typed client of every v1 endpoint; calls other than authorize throw typed errors.
import { AuthorityProblemError, AuthorityUnavailableError } from "./errors.js";
import { authorizeFailClosed, type AuthorizeOptions, type AuthorizeResult } from "./authorize.js";
import { runGuard, type GuardedTool, type GuardRequest, type GuardResult } from "./guard.js";
import { Transport, type CallOptions, type HttpResult, type KeyHeader, type RequestEvent } from "./transport.js";
import type * as wire from "./generated/types.js";
import type * as provisional from "./provisional.js";

export interface AuthorityClientOptions {
  /** The server's base URL, ending in the version segment `/v1`, e.g. `http://127.0.0.1:8080/v1`. */
  readonly baseUrl: string;
  /** The API key; it is sent in a header and never logged, printed or put in an error. */
  readonly apiKey: string;
  /** Default `auto`: Bearer on every path, `x-api-key` on the breaker paths as the specification shows. */
  readonly keyHeader?: KeyHeader;
  /** Per-attempt timeout. Default 5000 ms. */
  readonly timeoutMs?: number;
  /** Attempts per call, the first included; every retry reuses the call's `Idempotency-Key`. Default 3. */
  readonly attempts?: number;
  /** Wait before the second attempt, doubled for each later one (at most 5 s). Default 100 ms. */
  readonly retryDelayMs?: number;
  /** Let `authorize` answer `allow` when the platform is unavailable. Default false: it refuses. */
  readonly failOpen?: boolean;
  /** The fetch implementation; default the global `fetch` of Node.js. */
  readonly fetch?: typeof globalThis.fetch;
  /** Called after every attempt with what happened; the event never contains the key. */
  readonly onRequest?: (event: RequestEvent) => void;
}

/** Defaults of the client, one frozen object with units last. */
export const CLIENT_DEFAULTS = Object.freeze({ timeoutMs: 5_000, attempts: 3, retryDelayMs: 100, attemptsMax: 10 });

/** Query parameters of the list endpoints. */
export interface ListQuery {
  readonly limit?: number;
  readonly after?: string;
}

/** A client of one Agent Authority server. */
export class AuthorityClient {
  readonly #transport: Transport;
  readonly #failOpen: boolean;

  readonly agents;
  readonly grants;
  readonly families;
  readonly decisions;
  readonly certificates;
  readonly keys;
  readonly contracts;
  readonly breakers;
  readonly findings;

  constructor(options: AuthorityClientOptions) {
    const baseUrl = checkedBaseUrl(options.baseUrl);
    if (typeof options.apiKey !== "string" || options.apiKey.length === 0) throw new TypeError("apiKey must be a non-empty string");
    const attempts = options.attempts ?? CLIENT_DEFAULTS.attempts;
    if (!Number.isInteger(attempts) || attempts < 1 || attempts > CLIENT_DEFAULTS.attemptsMax) {
      throw new RangeError(`attempts must be an integer from 1 to ${CLIENT_DEFAULTS.attemptsMax}`);
    }
    const fetchFunction = options.fetch ?? globalThis.fetch;
    if (typeof fetchFunction !== "function") throw new TypeError("no fetch implementation: Node.js 20 or later provides one");
    this.#transport = new Transport(options.apiKey, {
      baseUrl,
      keyHeader: options.keyHeader ?? "auto",
      timeoutMs: options.timeoutMs ?? CLIENT_DEFAULTS.timeoutMs,
      attempts,
      retryDelayMs: options.retryDelayMs ?? CLIENT_DEFAULTS.retryDelayMs,
      fetch: fetchFunction,
      onRequest: options.onRequest,
    });
    this.#failOpen = options.failOpen ?? false;

    const get = <T>(path: string, query?: object, call?: CallOptions): Promise<T> => this.#call<T>("GET", withQuery(path, query), undefined, call);
    const post = <T>(path: string, body: unknown, call?: CallOptions): Promise<T> => this.#call<T>("POST", path, body, call);

    this.agents = {
      /** Registers an agent; idempotent by name. */
      register: (body: wire.AgentCreateBody, call?: CallOptions) => post<wire.Agent>("/agents", body, call),
      list: (query?: ListQuery, call?: CallOptions) => get<wire.AgentList>("/agents", query, call),
      get: (agentId: string, call?: CallOptions) => get<wire.Agent>(`/agents/${id(agentId)}`, undefined, call),
      certification: (agentId: string, call?: CallOptions) =>
        get<wire.CertificationStatus>(`/agents/${id(agentId)}/certification`, undefined, call),
      /** Certifies the agent with a human key; `issued_by` comes from that key, never from the body. */
      certify: (agentId: string, body: wire.CertificationBody, call?: CallOptions) =>
        post<wire.Certificate>(`/agents/${id(agentId)}/certification`, body, call),
    };
    this.grants = {
      issue: (body: wire.GrantIssueBody, call?: CallOptions) => post<wire.Grant>("/grants", body, call),
      /** What the grant would decide for a sample action; nothing is created. */
      preview: (body: wire.GrantPreviewBody, call?: CallOptions) => post<wire.GrantPreview>("/grants/preview", body, call),
      get: (grantId: string, call?: CallOptions) => get<wire.Grant>(`/grants/${id(grantId)}`, undefined, call),
      pending: (query?: ListQuery, call?: CallOptions) => get<wire.GrantList>("/grants/pending", query, call),
      approve: (grantId: string, body: wire.GrantApproveBody = {}, call?: CallOptions) =>
        post<wire.Grant>(`/grants/${id(grantId)}/approve`, body, call),
      delegate: (grantId: string, body: wire.GrantDelegateBody, call?: CallOptions) =>
        post<wire.Grant>(`/grants/${id(grantId)}/delegate`, body, call),
      /** Makes enforcement stricter; the certification check runs. */
      enforcement: (grantId: string, body: wire.GrantEnforcementBody, call?: CallOptions) =>
        post<wire.Grant>(`/grants/${id(grantId)}/enforcement`, body, call),
      /** Revokes the grant and its whole delegation subtree; answers the exact ids revoked. */
      revoke: (grantId: string, body: wire.GrantRevokeBody = {}, call?: CallOptions) =>
        post<wire.GrantRevocation>(`/grants/${id(grantId)}/revoke`, body, call),
    };
    this.families = {
      define: (body: provisional.GrantFamilyBody, call?: CallOptions) => post<provisional.GrantFamily>("/grant-families", body, call),
      list: (call?: CallOptions) => get<provisional.GrantFamilyList>("/grant-families", undefined, call),
      /** Issues a grant from the family's reviewed version; the certification check runs. */
      instantiate: (familyId: string, body: provisional.FamilyInstantiateBody, call?: CallOptions) =>
        post<wire.Grant>(`/grant-families/${id(familyId)}/instantiate`, body, call),
    };
    this.decisions = {
      /** Captures at most the amount held by an `allow` and releases the rest; the same body replays. */
      settle: (ledgerId: string, body: provisional.SettleBody, call?: CallOptions) =>
        post<provisional.Settlement>(`/decisions/${id(ledgerId)}/settle`, body, call),
      /** A human approves one gated action; the agent retries authorize with the `approval_id`. */
      approve: (ledgerId: string, body: provisional.DecisionApproveBody = {}, call?: CallOptions) =>
        post<provisional.Approval>(`/decisions/${id(ledgerId)}/approve`, body, call),
    };
    this.certificates = {
      list: (query?: ListQuery & { readonly agent_id?: string; readonly environment?: string }, call?: CallOptions) =>
        get<wire.CertificateList>("/certificates", query, call),
      revoke: (certificateId: string, body: wire.CertificateRevokeBody = {}, call?: CallOptions) =>
        post<wire.Certificate>(`/certificates/${id(certificateId)}/revoke`, body, call),
    };
    this.keys = {
      /** Creates a key; the secret is in this answer only. */
      create: (body: wire.KeyCreateBody, call?: CallOptions) => post<wire.KeyCreated>("/keys", body, call),
      list: (query?: ListQuery, call?: CallOptions) => get<wire.KeyList>("/keys", query, call),
      revoke: (keyId: string, body: wire.KeyRevokeBody = {}, call?: CallOptions) => post<wire.Key>(`/keys/${id(keyId)}/revoke`, body, call),
    };
    this.contracts = {
      declare: (body: provisional.ContractBody, call?: CallOptions) => post<provisional.Contract>("/contracts", body, call),
      get: (contractId: string, call?: CallOptions) => get<provisional.Contract>(`/contracts/${id(contractId)}`, undefined, call),
    };
    this.breakers = {
      /** Creates a breaker; it is born in `observe`. */
      create: (body: provisional.BreakerBody, call?: CallOptions) => post<provisional.Breaker>("/breakers", body, call),
      get: (breakerId: string, call?: CallOptions) => get<provisional.Breaker>(`/breakers/${id(breakerId)}`, undefined, call),
      /** Arms a breaker; `expecting_trips` must equal the counterfactual count or the server answers 409. */
      arm: (breakerId: string, body: provisional.BreakerArmBody, call?: CallOptions) =>
        post<provisional.Breaker>(`/breakers/${id(breakerId)}/arm`, body, call),
      /** How often each of the agent's breakers would have tripped over the last 90 days. */
      counterfactual: (agentId: string, query?: { readonly breaker_id?: string }, call?: CallOptions) =>
        get<provisional.Counterfactual>(`/agents/${id(agentId)}/breakers/counterfactual`, query, call),
    };
    this.findings = {
      list: (query?: ListQuery & { readonly agent_id?: string }, call?: CallOptions) => get<provisional.FindingList>("/findings", query, call),
    };
  }

  /**
   * Asks whether an action is permitted. A refusal is an answer, not an error; when the platform is
   * unreachable, fails or stalls, the answer is a `deny` saying so (or `allow` with `failOpen`).
   * It throws only for a 4xx, which means the request itself is wrong.
   */
  authorize(body: provisional.AuthorizeBody, options: AuthorizeOptions = {}): Promise<AuthorizeResult> {
    return authorizeFailClosed(
      (call) => this.#transport.request("POST", "/authorize", body, call),
      options.failOpen ?? this.#failOpen,
      options,
    );
  }

  /**
   * Authorizes `tool` under `grant`, runs `fn` only on `allow`, then settles what the tool reports
   * it spent. A refusal comes back as `{ ran: false }` and the tool never runs.
   */
  readonly guard = <T>(grant: string, tool: string, fn: GuardedTool<T>, request: GuardRequest = {}): Promise<GuardResult<T>> =>
    runGuard(this, grant, tool, fn, request);

  async #call<T>(method: "GET" | "POST", path: string, body: unknown, call: CallOptions | undefined): Promise<T> {
    return unwrap<T>(await this.#transport.request(method, path, body, call), method, path);
  }
}

function unwrap<T>(result: HttpResult, method: string, path: string): T {
  switch (result.kind) {
    case "ok":
      return result.body as T;
    case "problem":
      throw new AuthorityProblemError(result.problem, method, path);
    case "unavailable":
      throw new AuthorityUnavailableError(
        result.cause,
        `the platform is unavailable: ${result.message}`,
        result.attempts,
        result.status,
      );
  }
}

function checkedBaseUrl(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new TypeError("baseUrl must be an absolute URL ending in /v1");
  }
  const trimmed = url.href.replace(/\/+$/, "");
  if (!trimmed.endsWith("/v1") || url.search !== "" || url.hash !== "") throw new TypeError("baseUrl must be an absolute URL ending in /v1");
  if (url.username !== "" || url.password !== "") throw new TypeError("baseUrl must not carry credentials; pass apiKey");
  return trimmed;
}

/** Encodes one path segment, so an id can never change which endpoint is called. */
function id(value: string): string {
  return encodeURIComponent(value);
}

function withQuery(path: string, query: object | undefined): string {
  if (query === undefined) return path;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== null) params.set(key, String(value));
  }
  const text = params.toString();
  return text === "" ? path : `${path}?${text}`;
}
