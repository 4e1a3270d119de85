import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { inspect } from "node:util";
import { StoreError } from "./errors.js";

/** Random bytes source, injected so tests can be deterministic. */
export type RandomBytes = (size: number) => Uint8Array;

/** The environment variable holding seal keys: `kid:base64key,kid2:base64key`, the first one current. */
export const SEAL_KEYS_ENV = "DOORBELL_SEAL_KEYS";
/** The key file generated inside the data directory when no key is configured. */
export const GENERATED_KEY_FILE = "seal-keys";

const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
const KEY_BYTES = 32;

/** A key id and its 32-byte master key. */
export interface KeyEntry {
  readonly id: string;
  readonly key: Uint8Array;
}

/** Master key bytes, kept off the Keyring object so logging or serialising it shows no key. */
const material = new WeakMap<Keyring, ReadonlyMap<string, Buffer>>();

/**
 * Master keys by id. The first (current) key seals and hashes new values; the others only open and
 * look up old ones, so a key is retired by moving a new one in front and resealing. Printing,
 * inspecting or JSON-serialising a keyring shows the key ids only.
 */
export class Keyring {
  readonly currentKeyId: string;
  readonly keyIds: readonly string[];

  constructor(entries: readonly KeyEntry[]) {
    if (entries.length === 0)
      throw new StoreError("ERR_STORE_KEYRING_INVALID", "a keyring needs at least one key");
    const keys = new Map<string, Buffer>();
    entries.forEach((entry, index) => {
      if (typeof entry.id !== "string" || !KEY_ID.test(entry.id)) {
        throw new StoreError(
          "ERR_STORE_KEYRING_INVALID",
          `key ${index + 1}: a key id is 1 to 32 letters, digits, '_' or '-'`,
        );
      }
      if (!(entry.key instanceof Uint8Array) || entry.key.length !== KEY_BYTES) {
        throw new StoreError(
          "ERR_STORE_KEYRING_INVALID",
          `key ${entry.id}: a key is exactly ${KEY_BYTES} bytes`,
        );
      }
      if (keys.has(entry.id))
        throw new StoreError("ERR_STORE_KEYRING_INVALID", `key id ${entry.id} appears twice`);
      keys.set(entry.id, Buffer.from(entry.key));
    });
    this.keyIds = Object.freeze([...keys.keys()]);
    this.currentKeyId = this.keyIds[0] as string;
    material.set(this, keys);
    Object.freeze(this);
  }

  has(keyId: string): boolean {
    return material.get(this)?.has(keyId) ?? false;
  }

  toJSON(): { currentKeyId: string; keyIds: readonly string[] } {
    return { currentKeyId: this.currentKeyId, keyIds: this.keyIds };
  }

  [inspect.custom](): string {
    return `Keyring { current: ${this.currentKeyId}, keys: [${this.keyIds.join(", ")}] }`;
  }
}

/** The master key for an id. Internal to the package: never exported from the index. */
export function masterKey(keyring: Keyring, keyId: string): Buffer {
  const key = material.get(keyring)?.get(keyId);
  if (key === undefined) {
    throw new StoreError(
      "ERR_STORE_UNKNOWN_KEY",
      KEY_ID.test(keyId)
        ? `no key with id ${keyId} in the keyring; add the retired key back to open values sealed with it`
        : "the key id is not in the keyring",
    );
  }
  return key;
}

/**
 * Parses `kid:base64key` entries separated by commas or new lines (blank lines and lines starting
 * with `#` ignored); the first entry is current. Keys are 32 bytes in base64 or base64url. Error messages
 * name the entry's position, never its text.
 */
export function parseKeyring(text: string): Keyring {
  const entries: KeyEntry[] = [];
  const parts = text
    .split("\n")
    .filter((line) => !line.trim().startsWith("#"))
    .flatMap((line) => line.split(","))
    .map((part) => part.trim())
    .filter((part) => part !== "");
  parts.forEach((part, index) => {
    const colon = part.indexOf(":");
    const id = colon > 0 ? part.slice(0, colon).trim() : "";
    const encoded = colon > 0 ? part.slice(colon + 1).trim() : "";
    if (!KEY_ID.test(id) || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(encoded)) {
      throw new StoreError(
        "ERR_STORE_KEYRING_INVALID",
        `seal key entry ${index + 1} is not "kid:base64key" (kid: 1 to 32 letters, digits, '_' or '-')`,
      );
    }
    const key = Buffer.from(encoded.replace(/-/g, "+").replace(/_/g, "/"), "base64");
    if (key.length !== KEY_BYTES) {
      throw new StoreError(
        "ERR_STORE_KEYRING_INVALID",
        `seal key ${id} decodes to ${key.length} bytes; it must be ${KEY_BYTES} random bytes in base64`,
      );
    }
    // Only the current key seals: an old weak key may stay behind a new one until values are
    // resealed, or they could never be opened again.
    const weakness = index === 0 ? keyWeakness(key) : undefined;
    if (weakness !== undefined) {
      throw new StoreError(
        "ERR_STORE_KEYRING_INVALID",
        `seal key ${id} ${weakness}: a seal key is ${KEY_BYTES} random bytes (openssl rand -base64 ${KEY_BYTES})`,
      );
    }
    entries.push({ id, key });
  });
  if (entries.length === 0) throw new StoreError("ERR_STORE_KEYRING_INVALID", "no seal key found");
  return new Keyring(entries);
}

/**
 * Why a key given as text is evidently not random, or undefined. 32 random bytes have about 30
 * distinct values and all 32 fall in printable ASCII with odds near 1e-14, so neither test refuses
 * a generated key; they catch zeros, repeated patterns and a passphrase encoded as base64.
 */
function keyWeakness(key: Uint8Array): string | undefined {
  const distinct = new Set(key).size;
  if (distinct < 16) return `has only ${distinct} distinct byte values`;
  if (key.every((byte) => byte >= 0x20 && byte <= 0x7e)) return "is printable text, not random bytes";
  return undefined;
}

/** Writes a keyring in the format `parseKeyring` reads, one key per line. */
export function formatKeyring(entries: readonly KeyEntry[]): string {
  new Keyring(entries); // validates
  return entries.map((entry) => `${entry.id}:${Buffer.from(entry.key).toString("base64")}`).join("\n");
}

/** A new master key with a random id (`k` + 8 hex digits). */
export function generateKeyEntry(random: RandomBytes = randomBytes): KeyEntry {
  const key = Buffer.from(random(KEY_BYTES));
  if (key.length !== KEY_BYTES)
    throw new StoreError("ERR_STORE_CONFIG", "the random source returned too few bytes");
  return { id: `k${Buffer.from(random(4)).toString("hex")}`, key };
}

export interface LoadKeyringOptions {
  /** A key file written by an operator (format of `parseKeyring`); it must not be readable by others. */
  keyFile?: string;
  /** Environment to read `DOORBELL_SEAL_KEYS` from (default `process.env`). */
  env?: Record<string, string | undefined>;
  /**
   * Where to keep a generated key file (`<dataDir>/seal-keys`, mode 0600) when neither a key file
   * nor the variable is given: created on first start, reused after.
   */
  dataDir?: string;
  random?: RandomBytes;
}

export interface LoadedKeyring {
  readonly keyring: Keyring;
  /** Where the keys came from, for the start-up summary. */
  readonly source: "key-file" | "env" | "generated-key-file";
  /** The key file read or generated, if any. */
  readonly path?: string;
  /** True when this call generated the key file. */
  readonly created: boolean;
}

/**
 * Finds the seal keys: an explicit `keyFile` first, then `DOORBELL_SEAL_KEYS`, then the generated
 * key file in `dataDir` (made on first start). Refuses when none is available rather than sealing
 * with a key that would be lost at exit.
 */
export function loadKeyring(options: LoadKeyringOptions = {}): LoadedKeyring {
  if (options.keyFile !== undefined) {
    const file = path.resolve(options.keyFile);
    return { keyring: readKeyFile(file), source: "key-file", path: file, created: false };
  }
  const fromEnv = (options.env ?? process.env)[SEAL_KEYS_ENV];
  if (fromEnv !== undefined && fromEnv.trim() !== "") {
    return { keyring: parseKeyring(fromEnv), source: "env", created: false };
  }
  if (options.dataDir !== undefined) {
    const file = path.join(path.resolve(options.dataDir), GENERATED_KEY_FILE);
    const created = createKeyFileIfMissing(file, options.random ?? randomBytes);
    return { keyring: readKeyFile(file), source: "generated-key-file", path: file, created };
  }
  throw new StoreError(
    "ERR_STORE_KEYRING_MISSING",
    `no seal keys: set ${SEAL_KEYS_ENV}, pass a key file, or give a data directory to keep a generated one`,
  );
}

function readKeyFile(file: string): Keyring {
  let text: string;
  try {
    if (process.platform !== "win32") {
      const mode = fs.statSync(file).mode;
      if ((mode & 0o077) !== 0) {
        throw new StoreError(
          "ERR_STORE_KEY_FILE",
          `the key file ${file} is accessible to other users (mode ${(mode & 0o777).toString(8)}); run chmod 600 on it`,
        );
      }
    }
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    if (error instanceof StoreError) throw error;
    throw new StoreError("ERR_STORE_KEY_FILE", `cannot read the key file ${file}`, { cause: error });
  }
  return parseKeyring(text);
}

/**
 * Writes a new key file next to its final name and links it into place, so two processes starting
 * together never read a half-written file and never both win: the loser reads the winner's keys.
 */
function createKeyFileIfMissing(file: string, random: RandomBytes): boolean {
  if (fs.existsSync(file)) return false;
  const dir = path.dirname(file);
  const temp = path.join(dir, `.${GENERATED_KEY_FILE}.${Buffer.from(random(6)).toString("hex")}.tmp`);
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const entry = generateKeyEntry(random);
    const body = [
      "# Doorbell seal keys. The first key seals new values; the others only open old ones.",
      "# Keep this file secret (mode 0600) and back it up with the database: without it, sealed values are lost.",
      formatKeyring([entry]),
      "",
    ].join("\n");
    const fd = fs.openSync(temp, "wx", 0o600);
    try {
      fs.fchmodSync(fd, 0o600);
      fs.writeSync(fd, body);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    try {
      fs.linkSync(temp, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw error;
    }
    return true;
  } catch (error) {
    throw new StoreError("ERR_STORE_KEY_FILE", `cannot create the key file ${file}`, { cause: error });
  } finally {
    fs.rmSync(temp, { force: true });
  }
}
