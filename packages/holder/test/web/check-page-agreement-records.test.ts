// The public /check page (agent-agreement/1, issue #7): anyone pastes or uploads a record and
// reads its result with the reason in plain words; no sign-in, nothing stored. Served by the
// holder's app over real HTTP, with the published vectors of @doorbell/agreements (their key
// pages and DNS answers given as the checker's trust rule, so nothing leaves the machine).
import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { staticKeyPages, type TxtResolver } from "@doorbell/agreements";
import { type ServerType, serve } from "@hono/node-server";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mountCheckPage } from "../../src/web/pages/check-page.js";

// The published vectors of the sibling package in this workspace.
const vectors = path.join(import.meta.dirname, "..", "..", "..", "agreements", "vectors");
const read = (file: string) => readFileSync(path.join(vectors, file), "utf8");
const spec = JSON.parse(read("records.json")) as {
  trusted_origins: string[];
  key_pages: string[];
  dns_txt: Record<string, string[][]>;
  records: { name: string; file: string; result: string }[];
};
const recordOf = (result: string) =>
  read((spec.records.find((r) => r.result === result) as { file: string }).file);

describe("the /check page", () => {
  let server: ServerType;
  let origin: string;

  beforeAll(async () => {
    const txt: TxtResolver = async (name) => {
      const answer = spec.dns_txt[name];
      if (!answer) throw Object.assign(new Error("no such name"), { code: "ENOTFOUND" });
      return answer;
    };
    const app = new Hono();
    mountCheckPage(app, {
      holderName: "Test holder",
      options: {
        trustedOrigins: spec.trusted_origins,
        source: await staticKeyPages(spec.key_pages.map((file) => JSON.parse(read(file)))),
        txt,
      },
    });
    server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
    await new Promise<void>((resolve) => server.once("listening", () => resolve()));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const post = (form: FormData) => fetch(`${origin}/check`, { method: "POST", body: form });
  const pasted = (record: string) => {
    const form = new FormData();
    form.set("record", record);
    return form;
  };

  it("shows a form with a labelled text area and file input, with the pages' security headers", async () => {
    const response = await fetch(`${origin}/check`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-security-policy")).toMatch(/script-src 'none'/);
    const html = await response.text();
    // The operator's trust configuration, said on the page.
    expect(html).toContain("This holder fetches key pages from https://api.stackshift.cloud");
    expect(html).toContain('<label for="record">');
    expect(html).toContain('<label for="file">');
  });

  it("says a two-signature record checks out, and who signed what", async () => {
    const html = await (await post(pasted(recordOf("two_signatures")))).text();
    expect(html).toContain("<h1>Checks out, two signatures (keys as supplied)</h1>");
    expect(html).toMatch(/The offer is signed by/);
    expect(html).toMatch(/The acceptance is signed by/);
  });

  it("takes the record as an uploaded file too", async () => {
    const form = new FormData();
    form.set("file", new Blob([recordOf("two_signatures")], { type: "application/json" }), "record.json");
    const html = await (await post(form)).text();
    expect(html).toContain("<h1>Checks out, two signatures (keys as supplied)</h1>");
    expect(html).toContain("no trusted host vouched for them");
  });

  it("says a changed record does not check out, with the reason in plain words", async () => {
    const record = JSON.parse(recordOf("two_signatures")) as { terms: Record<string, unknown> };
    const tampered = JSON.stringify({ ...record, terms: { ...record.terms, note: "changed afterwards" } });
    const html = await (await post(pasted(tampered))).text();
    expect(html).toContain("<h1>Does not check out</h1>");
    expect(html).toMatch(/<div class="alert" role="status"><p>[^<]+<\/p><p>[^<]{20,}<\/p>/);
  });

  it("refuses an empty form, junk and an oversized record clearly", async () => {
    const empty = await post(pasted("   "));
    expect(empty.status).toBe(400);
    expect(await empty.text()).toContain("Paste a record or choose its file.");
    const junk = await (await post(pasted("not json {"))).text();
    expect(junk).toContain("<h1>Does not check out</h1>");
    const huge = await post(pasted(`{"x":"${"a".repeat(300 * 1024)}"}`));
    expect(huge.status).toBe(413);
    expect(await huge.text()).toContain("larger than 256 KB");
    const put = await fetch(`${origin}/check`, { method: "PUT" });
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("GET, HEAD, POST");
  });
});

describe("the /check page with key pages given by the visitor (issue 17: trust is configuration)", () => {
  let server: ServerType;
  let origin: string;
  const pageText = (file: string) => read(file);

  beforeAll(async () => {
    // No options: this holder trusts no key page host at all.
    const app = new Hono();
    mountCheckPage(app, { holderName: "Test holder" });
    server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
    await new Promise<void>((resolve) => server.once("listening", () => resolve()));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const post = (form: FormData) => fetch(`${origin}/check`, { method: "POST", body: form });

  it("says on the page that no host is trusted, and offers labelled key page fields", async () => {
    const html = await (await fetch(`${origin}/check`)).text();
    expect(html).toContain("This holder trusts no key page host");
    expect(html).toContain('<label for="keypages">');
    expect(html).toContain('<label for="keypagefiles">');
  });

  it("checks a record against pasted key pages, one after another", async () => {
    const form = new FormData();
    form.set("record", recordOf("two_signatures"));
    form.set("keypages", spec.key_pages.map(pageText).join("\n"));
    const html = await (await post(form)).text();
    expect(html).toContain("<h1>Checks out, two signatures (keys as supplied)</h1>");
  });

  it("checks a record against uploaded key page files", async () => {
    const form = new FormData();
    form.set("file", new Blob([recordOf("one_signature")], { type: "application/json" }), "record.json");
    for (const file of spec.key_pages) {
      form.append("keypagefiles", new Blob([pageText(file)], { type: "application/json" }), file);
    }
    const html = await (await post(form)).text();
    expect(html).toContain("<h1>Checks out, one signature (keys as supplied)</h1>");
  });

  it("without key pages, says what to give instead of fetching anything", async () => {
    const form = new FormData();
    form.set("record", recordOf("two_signatures"));
    const response = await post(form);
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("give the key pages of the record");
  });

  it("a signer's page missing from those given: does not check out, with the reason", async () => {
    const form = new FormData();
    form.set("record", recordOf("two_signatures"));
    form.set("keypages", pageText(spec.key_pages[0] as string));
    const html = await (await post(form)).text();
    expect(html).toContain("<h1>Does not check out</h1>");
    expect(html).toMatch(/could not be found/);
  });

  it("refuses key pages that are not JSON, clearly", async () => {
    const form = new FormData();
    form.set("record", recordOf("two_signatures"));
    form.set("keypages", "not a page");
    const response = await post(form);
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("The key pages are not JSON");
  });
});
