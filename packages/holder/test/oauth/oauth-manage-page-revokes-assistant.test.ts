/**
 * Issue #8: the manage page lists the assistants the person signed in to and revokes one in one
 * action. The person signs in and allows an assistant (the real flow, driven with fetch, the link
 * read from the local mailbox), the assistant publishes, the person opens the manage link of the
 * mail that follows, sees the assistant (name, sign-in host, what it may do) and revokes it; the
 * assistant's access token and refresh token are refused at once. SQLite and PostgreSQL.
 */

import { scopedSignalFetch } from "@doorbell/mcp-endpoint";
import { forEachEngine } from "@doorbell/store/testing";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalMailbox } from "../../src/mail/local-mailbox.js";
import {
  closeHolders,
  EMAIL,
  field,
  type HolderOnLoopback,
  holderOn,
  mcpInitialize,
  signedInClient,
  tokenRequest,
  tool,
} from "../support/oauth-harness.js";

const PUBLISH = {
  statement: "A two-room flat in Bratislava, at most 200,000 EUR",
  criteria: { category: "property", kind: "flat", roomsMin: 2 },
  area: { country: "SK", region: "SK-BL" },
  budget: { amount: 200_000, currency: "EUR" },
};

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: HolderOnLoopback;
  let client: Client | undefined;
  beforeAll(async () => {
    h = await holderOn(engine.url);
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    await closeHolders(h);
  });

  it("lists the assistant on the manage page and revokes it in one action; its tokens stop at once", async () => {
    const { clientId, tokens, browser } = await signedInClient(h);
    client = new Client({ name: "assistant", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${h.origin}/mcp`), {
        fetch: scopedSignalFetch(),
        requestInit: { headers: { authorization: `Bearer ${tokens.access_token}` } },
      }),
    );
    await tool(client, "intent_publish_intent", PUBLISH);

    const mailbox = h.holder.context.mailer as LocalMailbox;
    const mails = await mailbox.listMailbox({ to: EMAIL, limit: 20 });
    const managePath = mails
      .map((mail) => /\/manage\/[0-9A-Za-z]+/.exec(mail.text)?.[0])
      .find((found) => found !== undefined);
    expect(managePath).toBeDefined();

    const page = await browser.go(managePath as string);
    const html = await page.response.text();
    expect(html).toContain("Assistants you signed in to");
    expect(html).toContain("signs in at 127[.]0[.]0[.]1:9");
    expect(html).toContain("publish, change and withdraw your requests");
    const action = /action="(\/manage\/[0-9A-Za-z]+\/assistants\/[A-Za-z0-9_-]+\/revoke)"/.exec(html)?.[1];
    expect(action).toBeDefined();

    const after = await browser.go(action as string, { csrf: field(html, "csrf") });
    expect(after.response.status).toBe(200);
    expect(await after.response.text()).not.toContain("Assistants you signed in to");

    expect(tokens.refresh_token).toEqual(expect.any(String));
    expect((await mcpInitialize(h.origin, tokens.access_token)).status).toBe(401);
    const refreshed = await tokenRequest(h.origin, {
      grant_type: "refresh_token",
      client_id: clientId,
      refresh_token: tokens.refresh_token ?? "",
    });
    expect(refreshed.status).toBe(400);
  }, 30_000);

  it("refuses a revoke without the form's token, for a grant that is not the person's, and by GET", async () => {
    const { browser } = await signedInClient(h);
    const mailbox = h.holder.context.mailer as LocalMailbox;
    const managePath = (await mailbox.listMailbox({ to: EMAIL, limit: 20 }))
      .map((mail) => /\/manage\/[0-9A-Za-z]+/.exec(mail.text)?.[0])
      .find((found) => found !== undefined) as string;
    const forged = await browser.go(`${managePath}/assistants/AAAAAAAAAAAAAAAAAAAAA/revoke`, {
      csrf: "nope",
    });
    expect(forged.response.status).toBe(403);
    const html = await (await browser.go(managePath)).response.text();
    const notTheirs = await browser.go(`${managePath}/assistants/AAAAAAAAAAAAAAAAAAAAA/revoke`, {
      csrf: field(html, "csrf"),
    });
    expect(notTheirs.response.status).toBe(404);
    const get = await browser.go(`${managePath}/assistants/AAAAAAAAAAAAAAAAAAAAA/revoke`);
    expect(get.response.status).toBe(405);
  }, 30_000);
});
