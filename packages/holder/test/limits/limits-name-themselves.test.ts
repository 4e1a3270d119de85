// A refusal by a shared limit says which limit it was and how an operator changes it, so local
// testing that trips a default is not a dead end: a whole holder on loopback (both engines) with
// small limits answers 429 on the consent page (in the page's language), on a 2025-era initialize
// and on a client registration, and a tool error for a tool call, each naming the limit, its rule
// and `--limit <name>=N/SECONDS`. None of them says anything of the other callers: no address,
// no e-mail, no token, no count.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ERROR_META_KEY } from "@doorbell/intents/server";
import { forEachEngine } from "@doorbell/store/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHolder, type Holder } from "../../src/app/holder.js";
import { basicIntent, tokenOf } from "../support/intents-harness.js";
import { INITIALIZE, jsonRpcOf, MCP_HEADERS, modernPost, rawRequest } from "../support/mcp-harness.js";
import { freePort } from "../support/oauth-harness.js";
import { FormClient, hiddenField } from "../support/pages-harness.js";

const LIMITS = {
  "mail.client": { points: 2, durationSeconds: 3600 },
  "mcp.session": { points: 2, durationSeconds: 150 },
  "mcp.tool": { points: 3, durationSeconds: 60 },
  "oauth.register": { points: 1, durationSeconds: 3600 },
};

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let holder: Holder;
  let origin: string;
  let dir: string;

  beforeAll(async () => {
    const database = await engine.createDatabase();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-limit-hints-"));
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    holder = await createHolder({
      dataDir: dir,
      database: database.url,
      publicUrl: origin,
      env: {},
      log: pino({ level: "silent" }),
      demo: false,
      events: false,
      limits: LIMITS,
    });
    await holder.listen(port, "127.0.0.1");
  }, 120_000);
  afterAll(async () => {
    await holder?.close();
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Gives consent on a fresh intent's page as a browser in `language` would. */
  async function giveConsent(email: string, language: string) {
    const published = await holder.services.intents.publish(basicIntent());
    const page = `/consent/${tokenOf(published.consentUrl)}`;
    const browser = new FormClient(origin);
    const form = await browser.request(page, { headers: { "accept-language": language } });
    expect(form.status).toBe(200);
    return browser.post(
      page,
      {
        csrf: hiddenField(form.html, "csrf") ?? "",
        consentVersion: hiddenField(form.html, "consentVersion") ?? "",
        email,
        consent: "yes",
      },
      { "accept-language": language },
    );
  }

  it("names mail.client and --limit on the consent page's 429, in the page's language", async () => {
    const earlier = ["first.person@example.sk", "second.person@example.sk"];
    for (const email of earlier) expect((await giveConsent(email, "en")).status).toBe(200);

    const refused = await giveConsent("third.person@example.sk", "en");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(refused.html).toContain("Too many e-mails");
    expect(refused.html).toContain("the limit mail.client (2 per 3600 s) was reached");
    expect(refused.html).toContain("--limit mail.client=N/SECONDS");
    expect(refused.html).toContain("DOORBELL_LIMITS");
    for (const email of [...earlier, "third.person@example.sk"]) expect(refused.html).not.toContain(email);
    expect(refused.html).not.toContain("127.0.0.1");

    const slovak = await giveConsent("fourth.person@example.sk", "sk");
    expect(slovak.status).toBe(429);
    expect(slovak.html).toContain("bol dosiahnutý limit mail.client (2 za 3600 s)");
    expect(slovak.html).toContain("--limit mail.client=N/SECONDS");
    expect(slovak.html).toContain("Práve bolo vyžiadaných príliš veľa e-mailov");

    const czech = await giveConsent("fifth.person@example.sk", "cs");
    expect(czech.status).toBe(429);
    expect(czech.html).toContain("byl dosažen limit mail.client (2 za 3600 s)");
    expect(czech.html).toContain("--limit mail.client=N/SECONDS");
    expect(czech.html).toContain("Právě bylo vyžádáno příliš mnoho e-mailů");
  });

  it("names mcp.session and --limit on the 429 of a 2025-era initialize", async () => {
    const mcpUrl = new URL(`${origin}/mcp`);
    const statuses: number[] = [];
    let last = await rawRequest(mcpUrl, { headers: MCP_HEADERS, body: JSON.stringify(INITIALIZE) });
    statuses.push(last.status);
    for (let i = 0; i < 4 && last.status === 200; i++) {
      last = await rawRequest(mcpUrl, { headers: MCP_HEADERS, body: JSON.stringify(INITIALIZE) });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 429]);
    expect(Number(last.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    const message = jsonRpcOf(last).error?.message ?? "";
    expect(message).toMatch(/too many new sessions from this client; try again in \d+ s/);
    expect(message).toContain("The limit mcp.session (2 per 150 s) was reached");
    expect(message).toContain("--limit mcp.session=N/SECONDS (or DOORBELL_LIMITS)");
    expect(message).not.toContain("127.0.0.1");
  });

  it("names mcp.tool and --limit in the tool error past the tool-call limit", async () => {
    const mcpUrl = new URL(`${origin}/mcp`);
    const call = () =>
      rawRequest(
        mcpUrl,
        modernPost("tools/call", { name: "intent_search_offers", arguments: { statement: "octavia" } }),
      );
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await call());
    const results = answers.map(
      (answer) =>
        jsonRpcOf(answer).result as {
          isError?: boolean;
          content: { text: string }[];
          _meta?: Record<string, { code: string; limit?: string }>;
        },
    );
    expect(results.map((result) => result.isError === true)).toEqual([false, false, false, true]);
    const refused = results[3];
    expect(refused?._meta?.[ERROR_META_KEY]).toMatchObject({
      code: "ERR_HOLDER_RATE_LIMITED",
      limit: "mcp.tool",
    });
    const text = refused?.content[0]?.text ?? "";
    expect(text).toContain("The limit mcp.tool (3 per 60 s) was reached");
    expect(text).toContain("--limit mcp.tool=N/SECONDS (or DOORBELL_LIMITS)");
  });

  it("names oauth.register and --limit on the 429 of a client registration", async () => {
    const register = () =>
      fetch(`${origin}/oauth/reg`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          client_name: "Test assistant",
          redirect_uris: ["http://127.0.0.1:9/callback"],
          token_endpoint_auth_method: "none",
          grant_types: ["authorization_code", "refresh_token"],
          response_types: ["code"],
          application_type: "native",
        }),
      });
    expect((await register()).status).toBe(201);
    const refused = await register();
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as { error_description: string };
    expect(body.error_description).toContain("The limit oauth.register (1 per 3600 s) was reached");
    expect(body.error_description).toContain("--limit oauth.register=N/SECONDS");
  });
});
