// Issue #18: `doorbell serve --check-origin` names the key page hosts the public record checker at
// /check trusts. A record signed by two parties whose key pages live on a loopback origin checks
// out when that origin is given (the pages fetched through the holder's egress), and without it
// the page says no host is trusted and asks for the pages. A bad origin is refused, saying why.
import { mkdtempSync, readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRecord, signMessage } from "@doorbell/agreements";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accept, BUYER, jkuOf, quote, SELLER, T0, testKey } from "../../agreements/test/support.js";
import { run } from "../src/main.js";
import { captureIo, freePort, serving } from "./command-harness.js";

const vectors = join(import.meta.dirname, "..", "..", "agreements", "vectors", "key-pages");
const pages: Record<string, string> = {
  [`/.well-known/agent-agreements/${SELLER.party}.json`]: readFileSync(join(vectors, "seller.json"), "utf8"),
  [`/.well-known/agent-agreements/${BUYER.party}.json`]: readFileSync(join(vectors, "buyer.json"), "utf8"),
};

let keyHost: http.Server;
let keyOrigin: string;
let fetched: string[];
let record: string;

beforeAll(async () => {
  fetched = [];
  keyHost = http.createServer((request, response) => {
    fetched.push(request.url ?? "");
    const page = pages[request.url ?? ""];
    response.writeHead(page === undefined ? 404 : 200, { "content-type": "application/json" });
    response.end(page ?? "{}");
  });
  await new Promise<void>((resolve) => keyHost.listen(0, "127.0.0.1", resolve));
  keyOrigin = `http://127.0.0.1:${(keyHost.address() as AddressInfo).port}`;
  const seller = await testKey("seller");
  const buyer = await testKey("buyer");
  const offer = await signMessage(quote(), seller, { jku: jkuOf(SELLER.party, keyOrigin) });
  const acceptance = await signMessage(accept(offer.parsed.hash), buyer, {
    jku: jkuOf(BUYER.party, keyOrigin),
  });
  const sealed = await createRecord(
    {
      kind: "two_signatures",
      offer: offer.jws,
      acceptance: acceptance.jws,
      chain: [offer.parsed.hash, acceptance.parsed.hash],
      offerCurrent: true,
    },
    { key: seller, jku: jkuOf(SELLER.party, keyOrigin), now: T0 + 8000 },
  );
  record = JSON.stringify(sealed);
});
afterAll(() => new Promise<void>((resolve) => keyHost.close(() => resolve())));

const checkPage = async (origin: string): Promise<string> => {
  const form = new FormData();
  form.set("record", record);
  return (await fetch(`${origin}/check`, { method: "POST", body: form })).text();
};

const dataDir = () => mkdtempSync(join(tmpdir(), "doorbell-serve-check-"));

describe("doorbell serve --check-origin", () => {
  it("checks a record against key pages fetched from the named origin", async () => {
    const result = await serving(
      ["--port", String(await freePort()), "--no-demo", "--data-dir", dataDir(), "--check-origin", keyOrigin],
      async (origin) => {
        const page = await (await fetch(`${origin}/check`)).text();
        expect(page).toContain(`This holder fetches key pages from ${keyOrigin}`);
        const html = await checkPage(origin);
        // Fetched from a trusted origin: the verdict stands without "keys as supplied".
        expect(html).toContain("<h1>Checks out, two signatures</h1>");
        expect(html).not.toContain("keys as supplied");
        expect(fetched.sort()).toEqual(Object.keys(pages).sort());
      },
      { DOORBELL_LOG_LEVEL: "warn" },
    );
    expect(result.out).toMatch(
      new RegExp(
        `Record checker\\s+http://127\\.0\\.0\\.1:\\d+/check \\(key pages fetched from ${keyOrigin}\\)`,
      ),
    );
  });

  it("takes the origins from DOORBELL_CHECK_ORIGINS too; with none, the page asks for the key pages", async () => {
    fetched.length = 0;
    await serving(
      ["--port", String(await freePort()), "--no-demo", "--data-dir", dataDir()],
      async (origin) => {
        expect(await checkPage(origin)).toContain("Checks out, two signatures");
      },
      { DOORBELL_LOG_LEVEL: "warn", DOORBELL_CHECK_ORIGINS: `https://keys.example.org, ${keyOrigin}` },
    );
    const without = await serving(
      ["--port", String(await freePort()), "--no-demo", "--data-dir", dataDir()],
      async (origin) => {
        expect(await checkPage(origin)).toContain(
          "This holder trusts no key page host: give the key pages of the record&#39;s signers.",
        );
      },
      { DOORBELL_LOG_LEVEL: "warn" },
    );
    expect(without.out).toMatch(/Record checker\s+.*no key page host trusted/);
  });

  it("refuses an origin that is not one, saying why", async () => {
    for (const [value, words] of [
      ["ftp://keys.example.org", /is not an http\(s\) origin/],
      ["keys.example.org", /is not an http\(s\) origin/],
      ["https://keys.example.org/pages", /has more than an origin; give only https:\/\/keys\.example\.org/],
    ] as const) {
      const t = captureIo({ DOORBELL_DATA_DIR: dataDir() });
      const code = await run(
        ["serve", "--port", String(await freePort()), "--no-demo", "--check-origin", value],
        t.io,
      );
      expect(code).toBe(2);
      const [line, help] = t.err().trim().split("\n");
      expect(line).toMatch(words);
      expect(help).toBe("see `doorbell serve --help`");
    }
  });
});
