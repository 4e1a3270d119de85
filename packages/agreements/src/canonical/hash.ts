import { createHash } from "node:crypto";
import { canonicalBytes } from "./canonicalize.js";

/** Lowercase hex SHA-256 of some bytes. */
export const sha256Hex = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

/** "The hash of a message is the SHA-256 of its canonical bytes as lowercase hex." */
export const canonicalHash = (value: unknown): string => sha256Hex(canonicalBytes(value));

export const SHA256_HEX = /^[0-9a-f]{64}$/;
