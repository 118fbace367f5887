// Public face of this package: named re-exports only.
export { actionOf, actionTool, spendOf, type Action, type Spend } from "./action.js";
export { consoleLink } from "./approval.js";
export { answerOf, checkedCallResult, hostCallOf, type CheckedResult, type HostCall, type UpstreamAnswer } from "./call-checks.js";
export { callKey, handleCall, type CallRequest, type GatewayContext, type Session } from "./calls.js";
export { buildCatalog, routesInScope, type Catalog, type Route } from "./catalog.js";
export {
  parseGatewayConfig,
  type ConfigDiagnostic,
  type ConfigResult,
  type GatewayConfig,
  type HttpUpstream,
  type StdioUpstream,
  type ToolMapping,
  type UpstreamConfig,
  type ValueSource,
} from "./config.js";
export { attestUpstreams, startGateway, type AttestedManifest, type GatewayOptions, type RunningGateway } from "./gateway.js";
export { hostCallFront, type HostCallHandler } from "./host-calls.js";
export { parseListen, type Listen } from "./http.js";
export { GATEWAY_DEFAULTS, GATEWAY_LIMITS } from "./limits.js";
export { jsonLog, type Log, type LogLevel } from "./log.js";
export { parsePointer, pointerText, resolvePointer, type JsonPointer } from "./pointer.js";
export { ProgressRelay, type ProgressSend } from "./progress.js";
export { promptAction, promptNameAllowed, resourceAction } from "./protocol.js";
export { REFUSED_CODE } from "./refusal.js";
export { BoundedReadBuffer } from "./stdio-buffer.js";
export { TappedTransport, type Tap } from "./tapped-transport.js";
export { CallLane, callTool, type LaneOptions, type OnProgress } from "./upstream-calls.js";
export { GATEWAY_INFO } from "./upstreams.js";
