// The fixed upper bounds of the v1 interface, in one frozen object with units last.

export const API_LIMITS = Object.freeze({
  /** Largest request body the server reads; one byte more is refused with `body_too_large`. */
  requestBodyBytesMax: 65_536,
  /** The most agents one `enforcer` key may ask for (`agent_ids`), an explicit list and never all. */
  enforcerAgentsMax: 256,
  /** Deepest nesting of arrays and objects accepted in a request body. */
  requestJsonDepthMax: 32,
  /** Policy text limit of the language (docs/policy-language.md); the language checks bytes, the schema characters. */
  policyCharsMax: 4_096,
  /** Tools named in one scope. */
  scopeToolsMax: 256,
  toolNameCharsMax: 200,
  /** The wait an agent reports when it stops waiting for an approval (one day), in milliseconds. */
  abandonWaitMsMax: 86_400_000,
  agentNameCharsMax: 128,
  identityCharsMax: 254,
  textCharsMax: 2_000,
  ttlHoursMax: 8_760,
  checksMax: 64,
  listLimitMax: 1_000,
  listLimitDefault: 100,
  /** The longest `nonce` of an authorize or settle request. */
  nonceCharsMax: 128,
});
