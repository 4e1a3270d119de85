import { type EngineFixture, forEachEngine as registerPerEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe } from "vitest";

/** Runs `body` once on SQLite and once on PostgreSQL, each with a fresh database for the file. */
export function forEachEngine(body: (engine: EngineFixture) => void): void {
  registerPerEngine({ describe, beforeAll, afterAll }, body);
}

/** A fixed 32-byte key for tests, distinct per `n`. */
export function testKey(n: number): Buffer {
  return Buffer.alloc(32, n);
}
