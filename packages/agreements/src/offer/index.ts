export {
  AgreementThread,
  isExpiredAt,
  type OfferEntry,
  type OfferState,
  type ThreadEvent,
} from "./lifecycle.js";
