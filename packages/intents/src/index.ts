// @doorbell/intents: the Isto Intents binding 0.1 and push profile 0.4 as they are on the wire,
// for agents, forwarders and holders alike. The tool guard and results are in ./server.

export { BUDGET_BANDS, type BudgetBand, type DemandGrid } from "./demand-grid.js";
export {
  checkedDoorbell,
  NOTIFICATION_SCHEMA,
  notificationProblem,
  PUSH_EVENTS,
  type PushEvent,
  SUBSCRIPTION_SCHEMA,
  subscriptionProblem,
} from "./doorbells.js";
export { IntentsError, type IntentsErrorCode } from "./errors.js";
export { AREA_REGIONS, OFFER_LIMITS, STATEMENT_MAX } from "./limits.js";
export {
  COUNTRIES,
  CURRENCIES,
  isRegionOf,
  REGIONS,
  type RegionInfo,
  regionInfo,
  regionsOf,
} from "./regions.js";
export {
  AGGREGATOR_NOTE,
  areaSchema,
  categorySchema,
  countrySchema,
  criteriaSchema,
  currencySchema,
  demandInput,
  demandOut,
  getInput,
  getInputSignedIn,
  intentOut,
  listMatchesInput,
  listMatchesInputSignedIn,
  listMatchesOut,
  moneySchema,
  offerOut,
  publishInput,
  publishOut,
  pushSubscriptionOut,
  regionSchema,
  searchInput,
  searchOut,
  submitOfferInput,
  submitOfferOut,
  subscribeInput,
  unsubscribeInput,
  updateInput,
  withdrawInput,
  withdrawInputSignedIn,
  withdrawOut,
} from "./schemas.js";
export {
  MAX_SUBSCRIPTION_END_BYTES,
  readSubscriptionEnd,
  SUBSCRIPTION_END_REASONS,
  SUBSCRIPTION_END_TYPE,
  type SubscriptionEnd,
  type SubscriptionEndReason,
  subscriptionEndBody,
} from "./subscription-end.js";
export { PUSH_TOOL_NAMES, TOOL_NAMES, type ToolName } from "./tool-names.js";
export type { Category, Country, Currency } from "./types.js";
