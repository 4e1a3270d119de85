// @doorbell/mcp-endpoint: one URL serving both MCP eras (2026-07-28 stateless, 2025-11-25 sessions),
// with its admission, Host/Origin guard, rate limits and Node server; used by holder and forwarder.

export { type Admission, type AdmissionLimits, createAdmission, DEFAULT_ADMISSION } from "./admission.js";
export { type FetchLike, scopedSignalFetch } from "./client-fetch.js";
export {
  createMcpEndpoint,
  type EndpointOptions,
  type EndpointPolicy,
  type Era,
  MCP_PATH,
  type McpEndpoint,
  type McpHandler,
  type McpRequestInfo,
  type ModernHandler,
  type RequestFocus,
  type ServingScope,
  type SharedMcpLimit,
  type ToolObserver,
} from "./endpoint.js";
export {
  chooseHeapBound,
  HEAP_BOUND_OF_MEMORY,
  HEAP_BOUND_OF_V8_LIMIT,
  type HeapGauge,
  heapGauge,
  type MachineMemory,
  machineMemory,
} from "./heap-bound.js";
export { invalidParams, jsonRpcError } from "./json-rpc.js";
export { jsonSchemaOnce } from "./json-schema-once.js";
export type { LegacySessionLimits } from "./legacy-sessions.js";
export { liveTracer } from "./live-tracer.js";
export {
  isLoopbackHost,
  type ListenAddress,
  type NodeRoute,
  type NodeServers,
  nodeServers,
} from "./node-server.js";
export { createOriginGuard, hostnameOf, type OriginPolicy } from "./origin-guard.js";
export { portableJsonSchema } from "./portable-json-schema.js";
export type { QuickCall, QuickOutcome, QuickTool, QuickTools } from "./quick-call.js";
export {
  type CallLimit,
  createRateLimiter,
  type LimitNote,
  localLimitNote,
  notedLimiter,
  type RateLimit,
  type RateLimiter,
  type RateVerdict,
} from "./rate-limit.js";
