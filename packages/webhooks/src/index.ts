export { type BodyInput, toBytes } from "./bytes.js";
export {
  type AddressJudgement,
  type AddressRange,
  type AddressVerdict,
  checkUrl,
  classifyAddress,
  closeEgress,
  DEFAULT_EGRESS_FETCH_BYTES,
  DEFAULT_GET_JSON_BYTES,
  developmentPolicy,
  type EgressCategory,
  type EgressFailure,
  EgressFetchError,
  type EgressFetchOptions,
  type EgressPolicy,
  type EgressResult,
  type EgressSuccess,
  egressFetch,
  type GetJsonFailure,
  type GetJsonInput,
  type GetJsonResult,
  type GetJsonSuccess,
  getJson,
  HTTPS_PORT,
  type IPv4Embedding,
  isAddressAllowed,
  isPublicAddress,
  judgeAddress,
  MAX_GET_JSON_BYTES,
  MAX_RESPONSE_BYTES,
  type PolicyOptions,
  type PostWebhookInput,
  PRODUCTION_TIMEOUT_MS,
  type ProductionPolicyOptions,
  parseRetryAfter,
  postWebhook,
  productionPolicy,
  type ResolvedAddress,
  type Resolver,
  systemResolver,
  type UrlCheck,
} from "./egress/index.js";
export { isWebhookError, WebhookError, type WebhookErrorCode } from "./errors.js";
export { type ReadPrivateFileOptions, readPrivateFile } from "./files/read-private.js";
export { type WriteFileAtomicallyOptions, writeFileAtomically } from "./files/write-atomically.js";
export type { HeadersLike } from "./headers.js";
export {
  createMcpSigner,
  MCP_SIGNATURE,
  MCP_SUBSCRIPTION_ID,
  MCP_TIMESTAMP,
  type McpHeaders,
  type McpMessage,
  type McpSigner,
} from "./mcp/sign.js";
export {
  createMcpVerifier,
  type McpVerifier,
  type McpVerifierOptions,
  type VerifiedMcpWebhook,
} from "./mcp/verify.js";
export { type ChallengeRequest, readChallenge } from "./receiver/challenge.js";
export {
  type ClaimResult,
  createMemoryDedupStore,
  type DedupStore,
  type MemoryDedupOptions,
} from "./receiver/dedup.js";
export { type NodeHandlerOptions, toNodeHandler } from "./receiver/node.js";
export {
  createReceiver,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_REPLAY_WINDOW_SECONDS,
  type KeyLookup,
  type ReceivedWebhook,
  type Receiver,
  type ReceiverKeys,
  type ReceiverOptions,
} from "./receiver/receiver.js";
export {
  decodeSecret,
  generateSecret,
  generateSigningKeyPair,
  MAX_SECRET_BYTES,
  MIN_SECRET_BYTES,
  publicKeyOf,
} from "./secret.js";
export {
  type StandardHeaders,
  WEBHOOK_ID,
  WEBHOOK_SIGNATURE,
  WEBHOOK_TIMESTAMP,
} from "./standard/headers.js";
export {
  createStandardSigner,
  type StandardMessage,
  type StandardSigner,
  type StandardSignerOptions,
} from "./standard/sign.js";
export {
  createStandardVerifier,
  type StandardVerifier,
  type StandardVerifierOptions,
  type VerifiedStandardWebhook,
} from "./standard/verify.js";
export { type Clock, DEFAULT_TOLERANCE_SECONDS } from "./timestamp.js";
