// What the seal signs is written the short way (the checked JWS of each message put in as it is);
// it must be, character for character, canonicalJson of the record without its seal, whatever
// members the record carries, and refuse what canonicalJson refuses.
import { readdirSync, readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../src/index.js";
import { unsealed } from "../src/record/read.js";
import type { AgreementRecord } from "../src/record/types.js";
import { unsealedCanonical } from "../src/record/unsealed-canonical.js";
import { vectorsDir } from "./support.js";

const records = readdirSync(new URL("records/", vectorsDir))
  .filter((file) => file.endsWith(".json") && file !== "too-large.json")
  .map((file) => ({
    file,
    record: JSON.parse(readFileSync(new URL(`records/${file}`, vectorsDir), "utf8")) as AgreementRecord,
  }));

const jwsOf = (message: unknown): string | undefined =>
  message !== null && typeof message === "object" && "jws" in message && typeof message.jws === "string"
    ? message.jws
    : undefined;

const checkedJws = (record: AgreementRecord) => ({
  offer: jwsOf(record.offer),
  acceptance: jwsOf(record.acceptance),
});

describe("unsealedCanonical", () => {
  it.each(records)("is canonicalJson of the record without its seal: $file", ({ record }) => {
    expect(unsealedCanonical(record, checkedJws(record))).toBe(canonicalJson(unsealed(record)));
  });

  it("stays so with any members added anywhere the record allows them", () => {
    const base = records.find(({ file }) => file === "two-signatures-quote.json")?.record as AgreementRecord;
    const extra = fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 4 });
    fc.assert(
      fc.property(extra, extra, extra, (top, offer, acceptance) => {
        const record = {
          ...top,
          ...base,
          offer: { ...offer, ...base.offer },
          acceptance: { ...acceptance, ...base.acceptance },
        } as AgreementRecord;
        expect(unsealedCanonical(record, checkedJws(record))).toBe(canonicalJson(unsealed(record)));
      }),
      { numRuns: 300 },
    );
  });

  it("refuses a value with no canonical form as canonicalJson does", () => {
    const base = records[0]?.record as AgreementRecord;
    for (const bad of [{ note: "\ud800" }, { "\udc00": 1 }, { n: Number.NaN }]) {
      const record = { ...base, ...bad } as AgreementRecord;
      expect(() => canonicalJson(unsealed(record))).toThrow();
      expect(() => unsealedCanonical(record, checkedJws(record))).toThrow(
        expect.objectContaining({ code: "ERR_CANONICAL_INPUT" }),
      );
    }
  });
});
