export { IntentIndex } from "./intent-index.js";
export {
  fits,
  fold,
  type IntentFilter,
  type IntentFilterSource,
  intentFilter,
  type MatchableOffer,
  type OfferFacts,
  offerFacts,
} from "./rule.js";
export {
  createMatchingService,
  FILTER_COLUMNS,
  type FoundMatches,
  LIST_MATCHES_MAX,
  type MatchingOptions,
  type MatchingService,
} from "./service.js";
