export {
  type Admission,
  type AdmissionLimits,
  type CallLimit,
  createMcpEndpoint,
  createOriginGuard,
  createRateLimiter,
  DEFAULT_ADMISSION,
  type EndpointOptions,
  type EndpointPolicy,
  type Era,
  type FetchLike,
  type McpEndpoint,
  type McpHandler,
  type McpRequestInfo,
  type OriginPolicy,
  type RateLimit,
  type RateLimiter,
  type RateVerdict,
  type ServingScope,
  scopedSignalFetch,
} from "@doorbell/mcp-endpoint";
export { createMcpHandler, type HolderMcpEndpoint, type McpHandlerOptions } from "./handler.js";
export { buyerPrincipal, principalFromAuth } from "./principal.js";
export { ERROR_META_KEY, refusal, success, type ToolErrorMeta } from "./results.js";
export {
  AGGREGATOR_NOTE,
  demandInput,
  demandOut,
  getInput,
  intentOut,
  listMatchesInput,
  listMatchesOut,
  publishInput,
  publishOut,
  pushSubscriptionOut,
  searchInput,
  searchOut,
  submitOfferInput,
  submitOfferOut,
  updateInput,
  withdrawInput,
  withdrawOut,
} from "./schemas.js";
export { SUBSCRIPTION_URI_PREFIX } from "./subscription-resource.js";
export { type CallExtra, registerTool, type ToolConfig, type ToolGuard } from "./tool.js";
export { type HolderToolServices, PUSH_TOOL_NAMES, TOOL_NAMES, type ToolName } from "./tools.js";
