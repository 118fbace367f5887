// Every bound the gateway keeps, in one frozen object with units last.
export const GATEWAY_LIMITS = Object.freeze({
  /** The configuration file. */
  configBytesMax: 256 * 1024,
  upstreamsMax: 32,
  mappedToolsMax: 1_024,
  /** Entries of one tool's `args` mapping, the names the policy sees as `args.<name>`. */
  policyArgsMax: 64,
  /** Reference tokens of one JSON Pointer. */
  pointerTokensMax: 32,
  pointerCharsMax: 1_024,
  /** Tools one upstream may list (all pages together); more and that upstream's tools are dropped (logged). */
  upstreamToolsMax: 1_024,
  /** An action's tool name, as the authority server bounds it; a longer one is never listed. */
  actionNameCharsMax: 200,
  /** Pages of one upstream's tools/list. */
  toolPagesMax: 64,
  /** Pages of one upstream's resources, templates or prompts list. */
  listPagesMax: 64,
  /** Resources, templates or prompts one upstream may list (all pages together). */
  listEntriesMax: 4_096,
  /** Resources one host session may subscribe to at once. */
  subscriptionsMax: 256,
  /** The URI of one `resources/read`, in characters. */
  resourceUriCharsMax: 2_048,
  /** Calls remembered per session, so a retried JSON-RPC id is answered without a second decision. */
  rememberedCallsMax: 256,
  /** A finished call's result is remembered only up to this size (its JSON); a larger one is forgotten once sent. */
  rememberedResultCharsMax: 16 * 1024,
  /** Sessions of the HTTP transport at once; past it the least recently used idle one is closed. */
  httpSessionsMax: 64,
  httpSessionIdleSecondsMin: 1,
  httpSessionIdleSecondsMax: 86_400,
  /** The bearer token of the HTTP listener, in characters. */
  httpTokenCharsMin: 32,
  httpTokenCharsMax: 512,
  authorityTimeoutMsMin: 50,
  authorityTimeoutMsMax: 60_000,
  authorityAttemptsMax: 10,
  approvalWaitSecondsMax: 86_400,
  approvalPollMsMin: 100,
  approvalPollMsMax: 60_000,
  upstreamTimeoutMsMin: 100,
  upstreamTimeoutMsMax: 3_600_000,
  /** One message from a stdio upstream (the MCP SDK's own default); a larger result fails that call only. */
  upstreamMessageBytesMax: 10 * 1024 * 1024,
  /** The first and the longest wait before restarting an upstream that went away. */
  restartInitialMsMin: 10,
  restartMsMax: 600_000,
  /** One line of an upstream's standard error as logged; a longer line is cut. */
  upstreamStderrLineCharsMax: 4_096,
  /** The text of a refusal shown to the model. */
  refusalCharsMax: 2_000,
});

/** Defaults of the configuration, units last. */
export const GATEWAY_DEFAULTS = Object.freeze({
  authorityTimeoutMs: 2_000,
  authorityAttempts: 2,
  /** Under the 60 s after which MCP SDK clients give up a request that does not reset on progress. */
  approvalWaitSeconds: 55,
  approvalPollMs: 1_000,
  upstreamTimeoutMs: 60_000,
  /** An upstream that went away is restarted after 250 ms, then twice as long each failed try, at most 30 s apart. */
  restartInitialMs: 250,
  restartMaxMs: 30_000,
  /** An HTTP session with no request for this long is closed. */
  httpSessionIdleSeconds: 300,
});
