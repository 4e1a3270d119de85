/**
 * Shared limits: who is asking (client-address.ts)
 * and how often they may (shared-limiter.ts), counted in the holder's database so that every
 * process on it agrees.
 */
export {
  addressKey,
  CLIENT_ADDRESS_HEADERS,
  type ClientAddressHeader,
  type ClientAddressOptions,
  type ClientAddressResolver,
  createClientAddressResolver,
  DEFAULT_CLIENT_ADDRESS_HEADER,
  normaliseAddress,
  parseClientAddressHeader,
  parseTrustedProxies,
} from "./client-address.js";
export {
  createHolderLimits,
  type HolderLimits,
  type HolderLimitsOptions,
  peerAddress,
} from "./holder-limits.js";
export {
  LIMIT_FLAG,
  LIMIT_SUBJECTS,
  LIMIT_VARIABLE,
  type LimitHint,
  limitSpec,
  limitUsageLines,
  operatorHintText,
  sharedLimitHint,
} from "./limit-hints.js";
export { DEFAULT_LIMITS, LIMIT_BUCKETS, type LimitBucket, parseLimitSpecs } from "./rules.js";
export { type LimitsTables, limitsMigrations, type RateLimitRow } from "./schema.js";
export {
  createSharedLimiter,
  type LimitRule,
  type LimitVerdict,
  type SharedLimiter,
  type SharedLimiterOptions,
} from "./shared-limiter.js";
