export { type Admission, type AdmissionLimits, DEFAULT_ADMISSION } from "./admission.js";
export { type FetchLike, scopedSignalFetch } from "./client-fetch.js";
export {
  createMcpEndpoint,
  type EndpointOptions,
  type EndpointPolicy,
  type Era,
  type McpEndpoint,
  type ServingScope,
} from "./endpoint.js";
export {
  createMcpHandler,
  type HolderMcpEndpoint,
  type McpHandler,
  type McpHandlerOptions,
  type McpRequestInfo,
} from "./handler.js";
export { createOriginGuard, type OriginPolicy } from "./origin-guard.js";
export { buyerPrincipal, principalFromAuth } from "./principal.js";
export {
  type CallLimit,
  createRateLimiter,
  type RateLimit,
  type RateLimiter,
  type RateVerdict,
} from "./rate-limit.js";
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
