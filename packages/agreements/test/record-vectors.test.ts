// vectors/records.json: the checker's six workflow steps over every record vector. Each valid
// record gives its result; each invalid one "does not check out" at its step, with its code.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { checkRecord, staticKeyPages, type TxtResolver } from "../src/index.js";
import { readVector, vectorsDir } from "./support.js";

interface RecordVectors {
  trusted_origins: string[];
  key_pages: string[];
  dns_txt: Record<string, string[][]>;
  records: { name: string; file: string; result: string; code?: string; step?: number; warnings?: number }[];
}
const v = readVector<RecordVectors>("records.json");
const txt: TxtResolver = async (name) => {
  const answer = v.dns_txt[name];
  if (!answer) throw Object.assign(new Error("no such name"), { code: "ENOTFOUND" });
  return answer;
};
const options = async () => ({
  trustedOrigins: v.trusted_origins,
  source: await staticKeyPages(v.key_pages.map((path) => readVector(path))),
  txt,
});
const bytesOf = (file: string) => readFileSync(new URL(file, vectorsDir));

describe("record vectors", () => {
  it.each(v.records.filter((r) => r.result !== "does_not_check_out"))(
    "checks out ($result): $name",
    async ({ file, result, warnings }) => {
      const checked = await checkRecord(bytesOf(file), await options());
      expect(checked).toMatchObject({ ok: true, result });
      if (checked.ok) expect(checked.warnings).toHaveLength(warnings ?? 0);
    },
  );

  it.each(v.records.filter((r) => r.result === "does_not_check_out"))(
    "does not check out (step $step, $code): $name",
    async ({ file, code, step }) => {
      const checked = await checkRecord(bytesOf(file), await options());
      expect(checked).toMatchObject({ ok: false, result: "does_not_check_out", code, step });
      if (!checked.ok) expect(checked.reason).toMatch(/^[a-z]/);
    },
  );

  it("says the reason in plain words for the profile's three examples", async () => {
    const reason = async (file: string) => {
      const checked = await checkRecord(bytesOf(`records/${file}.json`), await options());
      return checked.ok ? "" : checked.reason;
    };
    expect(await reason("changed-term-unsealed")).toBe(
      "the record was changed after it was sealed: the seal does not cover this content",
    );
    expect(await reason("expired-offer")).toMatch(
      /^the offer had expired when it was accepted \(it expired 2026-01-08T01:00:00Z/,
    );
    expect(await reason("key-page-missing")).toMatch(
      /the offer signature: the key page https:\/\/api\.stackshift\.cloud\/\.well-known\/agent-agreements\/pty_ghost000000000000003\.json could not be found/,
    );
  });

  it("names the party that vouches for a reply", async () => {
    const checked = await checkRecord(bytesOf("records/their-reply.json"), await options());
    expect(checked.ok && checked.result === "their_reply" && checked.vouchedBy).toEqual({
      party: "pty_seller00000000000001",
      org_name: "Seller s.r.o.",
    });
  });

  it("warns, but checks, when a key was revoked after it signed", async () => {
    const checked = await checkRecord(bytesOf("records/revoked-after-signing.json"), await options());
    expect(checked.ok && checked.warnings[0]).toMatch(
      /^offer signature: the key .* was revoked at 2026-01-03T00:00:00Z, after this signature was made/,
    );
  });

  it("trusts no key page when the trusted host is another one", async () => {
    const checked = await checkRecord(bytesOf("records/two-signatures-quote.json"), {
      ...(await options()),
      trustedOrigins: ["https://keys.doorbell.example"],
    });
    expect(checked).toMatchObject({ ok: false, code: "ERR_JKU_UNTRUSTED", step: 4 });
  });
});
