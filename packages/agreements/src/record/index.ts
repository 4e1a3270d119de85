export { checkBinding, checkTerms, sealingParty } from "./binding.js";
export { buildRecord, createRecord, type HeldMessage, type RecordInput, type SealOptions } from "./build.js";
export { type ReadRecord, type RecordMessage, readRecord, unsealed } from "./read.js";
export { deriveTerms } from "./terms.js";
export * from "./types.js";
