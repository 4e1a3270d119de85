export { checkBinding, checkTerms, sealingParty } from "./binding.js";
export { buildRecord, createRecord, type HeldMessage, type RecordInput, type SealOptions } from "./build.js";
export { type ReadRecord, type RecordMessage, readRecord, unsealed } from "./read.js";
export { deriveTerms } from "./terms.js";
export {
  type AgreementRecord,
  type QuoteTerms,
  RECORD_KINDS,
  type RecordedMessage,
  type RecordedReply,
  type RecordKind,
  type RecordParty,
  type Terms,
  type TimeTerms,
  type UnsealedRecord,
} from "./types.js";
