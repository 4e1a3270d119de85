export { canonicalBytes, canonicalJson } from "./canonicalize.js";
export { canonicalHash, SHA256_HEX, sha256Hex } from "./hash.js";
export { assertJsonValue, type JsonValue } from "./json-value.js";
export { parseJson } from "./parse-json.js";
