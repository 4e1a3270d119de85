// Transports: e-mail, agent inbox, A2A and the A2A push binding rule.
export * from "./a2a/index.js";
export * from "./canonical/index.js";
export * from "./check/index.js";
export * from "./constants.js";
export * from "./email/index.js";
export { AgreementError, type AgreementErrorCode, isAgreementError } from "./errors.js";
export * from "./inbox/index.js";
export * from "./jws/index.js";
export * from "./keys/index.js";
export * from "./message/index.js";
export * from "./offer/index.js";
export * from "./record/index.js";
export { describeErrors, keyPageSchema, messageSchema, recordSchema } from "./schemas.js";
