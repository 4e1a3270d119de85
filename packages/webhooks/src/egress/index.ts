// The public surface of the SSRF-safe egress; the package index re-exports it.
export {
  type AddressRange,
  type AddressVerdict,
  classifyAddress,
  type IPv4Embedding,
  isPublicAddress,
} from "./address.js";
export { closeEgress } from "./agent.js";
export {
  DEFAULT_EGRESS_FETCH_BYTES,
  EgressFetchError,
  type EgressFetchOptions,
  egressFetch,
} from "./fetch.js";
export {
  DEFAULT_GET_JSON_BYTES,
  type GetJsonFailure,
  type GetJsonInput,
  type GetJsonResult,
  type GetJsonSuccess,
  getJson,
  MAX_GET_JSON_BYTES,
} from "./get-json.js";
export type { EgressCategory } from "./outcome.js";
export {
  developmentPolicy,
  type EgressPolicy,
  HTTPS_PORT,
  MAX_RESPONSE_BYTES,
  type PolicyOptions,
  PRODUCTION_TIMEOUT_MS,
  type ProductionPolicyOptions,
  productionPolicy,
} from "./policy.js";
export {
  type EgressFailure,
  type EgressResult,
  type EgressSuccess,
  type PostWebhookInput,
  postWebhook,
} from "./post.js";
export { type ResolvedAddress, type Resolver, systemResolver } from "./resolver.js";
export { parseRetryAfter } from "./retry-after.js";
export { checkUrl, type UrlCheck } from "./url-check.js";
export { type AddressJudgement, isAddressAllowed, judgeAddress } from "./verdict.js";
