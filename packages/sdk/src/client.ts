// The typed client of every v1 endpoint; calls other than authorize throw typed errors.
import { AuthorityProblemError, AuthorityUnavailableError } from "./errors.js";
import { authorizeFailClosed, type AuthorizeOptions, type AuthorizeResult } from "./authorize.js";
import { runGuard, type GuardedTool, type GuardRequest, type GuardResult } from "./guard.js";
import { newNonce, nonceOfKey, SigningKeyring, verifyDecision, verifySettlement, type SigningKeysOption } from "./verify.js";
import { fetchExchange, http1Exchange } from "./exchange.js";
import { Transport, type CallOptions, type HttpResult, type KeyHeader, type RequestEvent } from "./transport.js";
import type * as wire from "./generated/types.js";
import type * as provisional from "./provisional.js";
import {
  agentsCalls,
  breakersCalls,
  certificatesCalls,
  contractsCalls,
  decisionsCalls,
  familiesCalls,
  findingsCalls,
  grantsCalls,
  keysCalls,
  ledgerCalls,
  serviceCalls,
  signingKeysCalls,
  webhooksCalls,
  type Verbs,
} from "./resources.js";

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
  /** The agent's attestation, presented on every authorize that does not name its own (gate 5). */
  readonly attestation?: provisional.Attestation;
  /**
   * The server's public signing keys, to verify every decision and settlement with
   * (docs/verification.md): a JWKS as GET /v1/signing-keys answers it, saved beforehand and pinned
   * here (the recommended form), or `"fetch-once"`. Absent: `"fetch-once"`, the keys fetched from
   * the server at the first authorize over this client's own connection settings and kept for the
   * client's life; a key the server starts using later is trusted by a new client, never by this
   * one. Every authorize sends a fresh `nonce`.
   */
  readonly signingKeys?: SigningKeysOption;
  /**
   * UNSAFE. Obey answers without verifying them: an unsigned, forged, replayed or altered `allow`
   * from whatever answers at `baseUrl` is then taken as the server's. Only for a server that
   * signs nothing (a version before signing); never together with `signingKeys`.
   */
  readonly allowUnsignedAnswers?: boolean;
  /**
   * A `fetch` to send requests with (a proxy's, a test's). Absent: Node.js's own HTTP client on
   * kept-alive connections, which costs a third of the CPU of the global `fetch` per call.
   */
  readonly fetch?: typeof globalThis.fetch;
  /** Called after every attempt with what happened; the event never contains the key. */
  readonly onRequest?: (event: RequestEvent) => void;
}

/** Defaults of the client, one frozen object with units last. */
export const CLIENT_DEFAULTS = Object.freeze({ timeoutMs: 5_000, attempts: 3, retryDelayMs: 100, attemptsMax: 10 });

/** A client of one Agent Authority server. */
export class AuthorityClient {
  readonly #transport: Transport;
  readonly #failOpen: boolean;
  readonly #attestation: provisional.Attestation | undefined;
  readonly #signingKeys: SigningKeysOption | undefined;
  #keyring: Promise<SigningKeyring | undefined> | undefined;

  readonly agents: ReturnType<typeof agentsCalls>;
  readonly grants: ReturnType<typeof grantsCalls>;
  readonly families: ReturnType<typeof familiesCalls>;
  readonly decisions: ReturnType<typeof decisionsCalls>;
  readonly certificates: ReturnType<typeof certificatesCalls>;
  readonly keys: ReturnType<typeof keysCalls>;
  readonly contracts: ReturnType<typeof contractsCalls>;
  readonly breakers: ReturnType<typeof breakersCalls>;
  readonly findings: ReturnType<typeof findingsCalls>;
  readonly ledger: ReturnType<typeof ledgerCalls>;
  readonly signingKeys: ReturnType<typeof signingKeysCalls>;
  readonly webhooks: ReturnType<typeof webhooksCalls>;
  readonly service: ReturnType<typeof serviceCalls>;

  constructor(options: AuthorityClientOptions) {
    const baseUrl = checkedBaseUrl(options.baseUrl);
    if (typeof options.apiKey !== "string" || options.apiKey.length === 0) throw new TypeError("apiKey must be a non-empty string");
    const attempts = options.attempts ?? CLIENT_DEFAULTS.attempts;
    if (!Number.isInteger(attempts) || attempts < 1 || attempts > CLIENT_DEFAULTS.attemptsMax) {
      throw new RangeError(`attempts must be an integer from 1 to ${CLIENT_DEFAULTS.attemptsMax}`);
    }
    if (options.fetch !== undefined && typeof options.fetch !== "function") throw new TypeError("fetch must be a function");
    this.#transport = new Transport(options.apiKey, {
      baseUrl,
      keyHeader: options.keyHeader ?? "auto",
      timeoutMs: options.timeoutMs ?? CLIENT_DEFAULTS.timeoutMs,
      attempts,
      retryDelayMs: options.retryDelayMs ?? CLIENT_DEFAULTS.retryDelayMs,
      exchange: options.fetch === undefined ? http1Exchange() : fetchExchange(options.fetch),
      onRequest: options.onRequest,
    });
    this.#failOpen = options.failOpen ?? false;
    this.#attestation = options.attestation;
    if (
      options.signingKeys !== undefined &&
      options.signingKeys !== "fetch-once" &&
      (typeof options.signingKeys !== "object" || !Array.isArray(options.signingKeys.keys))
    ) {
      throw new TypeError('signingKeys must be a JWKS ({"keys": [...]}) or "fetch-once"');
    }
    if (options.allowUnsignedAnswers !== undefined && typeof options.allowUnsignedAnswers !== "boolean")
      throw new TypeError("allowUnsignedAnswers must be a boolean");
    if (options.allowUnsignedAnswers === true && options.signingKeys !== undefined)
      throw new TypeError("signingKeys and allowUnsignedAnswers: true exclude each other: keys are given to verify with");
    // INVARIANT (verified-by-default): answers are verified unless the caller opted out by name.
    this.#signingKeys = options.allowUnsignedAnswers === true ? undefined : (options.signingKeys ?? "fetch-once");

    const verbs: Verbs = {
      get: <T>(path: string, query?: object, call?: CallOptions): Promise<T> =>
        this.#call<T>("GET", withQuery(path, query), undefined, call),
      post: <T>(path: string, body: unknown, call?: CallOptions): Promise<T> => this.#call<T>("POST", path, body, call),
    };
    this.agents = agentsCalls(verbs);
    this.grants = grantsCalls(verbs);
    this.families = familiesCalls(verbs);
    const decisions = decisionsCalls(verbs);
    this.decisions =
      this.#signingKeys === undefined
        ? decisions
        : { ...decisions, settle: (ledgerId, body, call) => this.#verifiedSettle(decisions.settle, ledgerId, body, call) };
    this.certificates = certificatesCalls(verbs);
    this.keys = keysCalls(verbs);
    this.contracts = contractsCalls(verbs);
    this.breakers = breakersCalls(verbs);
    this.findings = findingsCalls(verbs);
    this.ledger = ledgerCalls(verbs);
    this.signingKeys = signingKeysCalls(verbs);
    this.webhooks = webhooksCalls(verbs);
    this.service = serviceCalls(verbs);
  }

  /**
   * Asks whether an action is permitted. A refusal is an answer, not an error; when the platform is
   * unreachable, fails or stalls, the answer is a `deny` saying so (or `allow` with `failOpen`).
   * It throws only for a 4xx, which means the request itself is wrong (not for 409 `contention`,
   * which is retried under the same key and, on every attempt, is unavailability).
   */
  async authorize(body: wire.AuthorizeBody, options: AuthorizeOptions = {}): Promise<AuthorizeResult> {
    const attested = body.attestation === undefined && this.#attestation !== undefined ? { ...body, attestation: this.#attestation } : body;
    // A fresh nonce per call, kept across its retries (which resend the same body under one key).
    // A call repeated under the caller's own Idempotency-Key repeats the request, so its nonce
    // comes from that key: the same body, and the first answer replayed verifies as its own.
    const nonce = attested.nonce ?? (options.idempotencyKey === undefined ? newNonce() : await nonceOfKey(options.idempotencyKey));
    const sent = { ...attested, nonce };
    return authorizeFailClosed(
      (call) => this.#transport.request("POST", "/authorize", sent, call),
      options.failOpen ?? this.#failOpen,
      options,
      this.#signingKeys === undefined
        ? undefined
        : async (decision) => {
            const keyring = await this.#keys();
            if (keyring === undefined)
              return { reason: "unknown_key", message: "the server's signing keys could not be fetched, so no answer can be verified" };
            return verifyDecision(decision, sent, sent.nonce, keyring);
          },
    );
  }

  /**
   * Settles and verifies the answer: a settlement that is unsigned, mis-signed, replayed or about
   * another decision or amount throws `AuthorityUnavailableError` (`unverified_answer`) with the
   * reason, so nothing takes it for the server's record.
   */
  async #verifiedSettle(
    settle: (ledgerId: string, body: wire.SettleBody, call?: CallOptions) => Promise<wire.Settlement>,
    ledgerId: string,
    body: wire.SettleBody,
    call: CallOptions | undefined,
  ): Promise<wire.Settlement> {
    // As for authorize: fresh per call, or derived from the caller's own key so a repeat verifies.
    const nonce = body.nonce ?? (call?.idempotencyKey === undefined ? newNonce() : await nonceOfKey(call.idempotencyKey));
    const sent = { ...body, nonce };
    const answer = await settle(ledgerId, sent, call);
    const keyring = await this.#keys();
    const failure =
      keyring === undefined
        ? { reason: "unknown_key" as const, message: "the server's signing keys could not be fetched, so no answer can be verified" }
        : typeof answer === "object" && answer !== null
          ? await verifySettlement(answer as unknown as Record<string, unknown>, ledgerId, sent, nonce, keyring)
          : { reason: "unsigned" as const, message: "the answer is not a settlement" };
    if (failure !== undefined)
      throw new AuthorityUnavailableError(
        "unverified_answer",
        `the settlement was not verified: ${failure.reason}: ${failure.message}`,
        1,
        undefined,
        failure,
      );
    return answer;
  }

  /** The keys answers are verified with: given, or fetched at the first use and pinned once fetched. */
  #keys(): Promise<SigningKeyring | undefined> {
    const option = this.#signingKeys;
    if (option !== "fetch-once")
      return Promise.resolve(option === undefined ? undefined : (this.#keyring ??= Promise.resolve(new SigningKeyring(option))));
    this.#keyring ??= this.#transport.request("GET", "/signing-keys", undefined, {}).then((result) => {
      const keyring = result.kind === "ok" ? new SigningKeyring(result.body as wire.SigningKeySet) : undefined;
      // A failed fetch is not pinned: the next call tries again, and until then nothing verifies.
      if (keyring === undefined || keyring.size === 0) this.#keyring = undefined;
      return keyring !== undefined && keyring.size > 0 ? keyring : undefined;
    });
    return this.#keyring;
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
      throw new AuthorityUnavailableError(result.cause, `the platform is unavailable: ${result.message}`, result.attempts, result.status);
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
  if (!trimmed.endsWith("/v1") || url.search !== "" || url.hash !== "")
    throw new TypeError("baseUrl must be an absolute URL ending in /v1");
  if (url.username !== "" || url.password !== "") throw new TypeError("baseUrl must not carry credentials; pass apiKey");
  return trimmed;
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
