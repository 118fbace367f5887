// The stable problem codes of v1: each names one kind of refusal with its HTTP status. Codes are
// never reworded or reused; clients branch on `code`, never on `title` or `detail`.

export const PROBLEM_CODES = Object.freeze({
  // 400: the request is malformed.
  malformed_json: { status: 400, title: "the request body is not valid JSON" },
  invalid_body: { status: 400, title: "the request body does not match its schema" },
  unknown_field: { status: 400, title: "the request body has a field v1 does not define" },
  body_too_deep: { status: 400, title: "the request body nests deeper than the limit" },
  invalid_id: { status: 400, title: "an id in the path has the wrong form or prefix" },
  invalid_query: { status: 400, title: "a query parameter is malformed" },
  invalid_text: { status: 400, title: "a string holds a character v1 does not store" },
  invalid_idempotency_key: { status: 400, title: "the idempotency key is malformed" },
  invalid_last_event_id: { status: 400, title: "`Last-Event-ID` is not an event sequence" },
  invalid_cursor: { status: 400, title: "the page cursor is not one this list answered" },
  malformed_request: { status: 400, title: "the request line or headers are not valid HTTP/1.1" },
  // 401 and 403: who is asking.
  unauthenticated: { status: 401, title: "a valid API key is required" },
  forbidden: { status: 403, title: "the key lacks a role this endpoint needs" },
  human_required: { status: 403, title: "this action needs a human identity, not a service key" },
  self_approval: { status: 403, title: "an issuer cannot approve its own grant" },
  certification_required: { status: 403, title: "the agent holds no valid certificate for this environment" },
  // 404: unknown resource.
  route_not_found: { status: 404, title: "no such endpoint" },
  agent_not_found: { status: 404, title: "no such agent" },
  grant_not_found: { status: 404, title: "no such grant" },
  certificate_not_found: { status: 404, title: "no such certificate" },
  key_not_found: { status: 404, title: "no such key" },
  decision_not_found: { status: 404, title: "no such decision" },
  approval_not_found: { status: 404, title: "the decision has no approval yet" },
  contract_not_found: { status: 404, title: "no such contract" },
  breaker_not_found: { status: 404, title: "no such breaker" },
  family_not_found: { status: 404, title: "no such grant family or version" },
  webhook_not_found: { status: 404, title: "no such webhook" },
  delivery_not_found: { status: 404, title: "no such webhook delivery" },
  // 405, 408, 413, 415, 431: transport.
  method_not_allowed: { status: 405, title: "the endpoint does not accept this method" },
  body_too_large: { status: 413, title: "the request body is larger than the limit" },
  request_timeout: { status: 408, title: "the request did not arrive in time" },
  unsupported_media_type: { status: 415, title: "request bodies must be application/json" },
  headers_too_large: { status: 431, title: "the request's headers are larger than the limit" },
  // 409: conflicts with the current state.
  grant_not_pending: { status: 409, title: "the grant is not awaiting approval" },
  grant_not_active: { status: 409, title: "the grant is not active" },
  grant_already_revoked: { status: 409, title: "the grant is already revoked" },
  certificate_already_revoked: { status: 409, title: "the certificate is already revoked" },
  key_already_revoked: { status: 409, title: "the key is already revoked" },
  last_admin_key: { status: 409, title: "the last active admin key cannot be revoked" },
  nothing_held: { status: 409, title: "the decision holds no amount to settle" },
  already_settled: { status: 409, title: "the decision was settled with another amount" },
  signing_key_not_active: { status: 409, title: "the signing key named to retire is not the active one" },
  hold_expired: { status: 409, title: "the decision's hold expired before it was settled" },
  decision_not_gated: { status: 409, title: "the decision is not gated by its policy" },
  decision_already_approved: { status: 409, title: "the gated decision was already approved" },
  breaker_already_armed: { status: 409, title: "the breaker is already armed" },
  breaker_not_armed: { status: 409, title: "the breaker is not armed" },
  trip_count_mismatch: { status: 409, title: "`expecting_trips` is not the trip count of the last 90 days" },
  family_version_conflict: { status: 409, title: "the family's content changed but its version was not raised" },
  key_secret_shown_once: {
    status: 409,
    title: "the key was created by the first request with this idempotency key; its secret is shown only once",
  },
  webhook_not_active: { status: 409, title: "the webhook is not in a state this action applies to" },
  too_many_webhooks: { status: 409, title: "the server holds the most webhooks it allows" },
  contention: {
    status: 409,
    title: "the request met contention in the database, was tried again until its limit, and changed nothing; it may be sent again",
  },
  // 422: well-formed, but breaks a rule.
  invalid_policy: { status: 422, title: "the policy does not compile" },
  delegation_widens: { status: 422, title: "the delegated grant would be wider than its parent" },
  delegation_chain_too_long: { status: 422, title: "the delegated grant would make the chain longer than the limit" },
  not_an_escalation: { status: 422, title: "enforcement can only be made stricter" },
  invalid_key_request: { status: 422, title: "the key request breaks a rule" },
  settle_exceeds_hold: { status: 422, title: "the amount settled exceeds the amount held" },
  idempotency_key_reused: { status: 422, title: "the idempotency key was used with another request" },
  invalid_family: { status: 422, title: "the grant family breaks a rule of the family compiler" },
  family_parameters_invalid: { status: 422, title: "the parameters do not instantiate the family" },
  webhook_url_refused: { status: 422, title: "the webhook URL is not an http(s) URL the server may call" },
  approver_not_admitted: { status: 422, title: "the caller is not an approver the gated decision admits" },
  // 429: a bound on open resources (not a rate limit).
  too_many_streams: { status: 429, title: "the key holds the most event streams it may open at once" },
  // 5xx: the platform failed; never carries internals.
  internal_error: { status: 500, title: "the server failed" },
  not_ready: { status: 503, title: "the server is not ready" },
  unavailable: {
    status: 503,
    title: "the database is unreachable or failing over; the request may be sent again with the same idempotency key",
  },
} as const);

export type ProblemCode = keyof typeof PROBLEM_CODES;

/**
 * The `Retry-After` of a `contention` answer, in seconds: long enough for the conflicting
 * transactions to finish (the server already retried for up to two seconds), short enough that an
 * agent waiting on a decision is not held up for long.
 */
export const CONTENTION_RETRY_AFTER_SECONDS = 1;

/**
 * The `Retry-After` of an `unavailable` answer, in seconds: a failover of a primary with a
 * synchronous standby takes a few seconds, and a client retrying each second sees its end soon.
 */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

/** The `type` URI of a problem code (RFC 9457 §3.1.1). */
export function problemTypeUri(code: ProblemCode): string {
  return `urn:agent-authority:problem:${code}`;
}
