export {
  type CompactParts,
  readCompactJws,
  signCanonical,
  signCanonicalBytes,
  verifyCompactSignature,
} from "./compact.js";
export {
  checkProtectedHeader,
  KEY_PAGE_FORM,
  keyPageParty,
  type ProtectedHeader,
  typMatches,
} from "./header.js";
export {
  generateSigningKey,
  importPublicKey,
  importSigningKey,
  keyThumbprint,
  type PrivateJwk,
  type PublicJwk,
  type SigningKey,
  toPublicJwk,
} from "./keys.js";
export type { KeyRequest, KeyResolver, KeysFrom, TrustedKey } from "./resolver.js";
export { type SignedMessage, type SignMessageOptions, signMessage } from "./sign.js";
export { readSignedMessage, type VerifiedMessage, verifyMessage } from "./verify.js";
