/** The profile identifiers and the fixed values both documents carry. */
export const MESSAGE_PROFILE = "agent-intents/1";
export const RECORD_PROFILE = "agent-agreement/1";
export const PROFILE_URL = "https://docs.stackshift.cloud/agent-intents/v1";
export const MESSAGE_CONTEXT = Object.freeze(["https://schema.org", PROFILE_URL] as const);
export const MESSAGE_SCHEMA_ID = "https://docs.stackshift.cloud/agent-intents/v1/message.schema.json";
export const RECORD_SCHEMA_ID = "https://docs.stackshift.cloud/agent-intents/v1/record.schema.json";

/** The JWS `typ` of a signed message and of a record's seal. */
export const MESSAGE_JWS_TYPE = "agent-intent+jws";
export const SEAL_JWS_TYPE = "agent-agreement+jws";
export const JWS_ALGORITHM = "EdDSA";

/** "The part is at most 32 KB"; a record "of at most 256 KB". KB = 1,024 bytes. */
export const MAX_MESSAGE_BYTES = 32 * 1024;
export const MAX_RECORD_BYTES = 256 * 1024;
/** A compact JWS of a 32 KB payload in base64url, with its header and signature. */
export const MAX_MESSAGE_JWS_CHARS = Math.ceil((MAX_MESSAGE_BYTES * 4) / 3) + 2048;

/** "In this version the trusted host is api.stackshift.cloud". */
export const DEFAULT_TRUSTED_ORIGIN = "https://api.stackshift.cloud";
export const KEY_PAGE_PATH_PREFIX = "/.well-known/agent-agreements/";
export const DNS_VOUCH_PREFIX = "_agent-agreements.";
