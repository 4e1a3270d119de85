import { hkdfSync } from "node:crypto";
import { type Keyring, masterKey } from "./keyring.js";

const SALT = Buffer.from("doorbell/store", "utf8");

/**
 * A 32-byte key for one purpose, derived with HKDF-SHA256 from a master key, so the sealing key and
 * each hashing key differ even though the operator manages a single secret per key id.
 */
export function deriveKey(keyring: Keyring, keyId: string, info: string): Buffer {
  return Buffer.from(hkdfSync("sha256", masterKey(keyring, keyId), SALT, Buffer.from(info, "utf8"), 32));
}
