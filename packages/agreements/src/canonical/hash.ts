import * as crypto from "node:crypto";
import { canonicalBytes } from "./canonicalize.js";

/** Lowercase hex SHA-256 of some bytes. */
// crypto.hash (Node ≥ 20.12) is the one-shot form, without a Hash object per call.
const oneShot = (crypto as { hash?: (algorithm: string, data: Uint8Array, encoding: "hex") => string }).hash;
export const sha256Hex = (bytes: Uint8Array): string =>
  oneShot ? oneShot("sha256", bytes, "hex") : crypto.createHash("sha256").update(bytes).digest("hex");

/** "The hash of a message is the SHA-256 of its canonical bytes as lowercase hex." */
export const canonicalHash = (value: unknown): string => sha256Hex(canonicalBytes(value));

export const SHA256_HEX = /^[0-9a-f]{64}$/;
