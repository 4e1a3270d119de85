import { createHash } from "node:crypto";
import { type EngineFixture, forEachEngine as registerPerEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe } from "vitest";

/** Runs `body` once on SQLite and once on PostgreSQL, each with a fresh database for the file. */
export function forEachEngine(body: (engine: EngineFixture) => void): void {
  registerPerEngine({ describe, beforeAll, afterAll }, body);
}

/** A fixed 32-byte key for tests, distinct per `n`. */
export function testKey(n: number): Buffer {
  // Random-looking and the same every run: a key file refuses zeros or one repeated byte.
  return createHash("sha256").update(`doorbell test key ${n}`).digest();
}
