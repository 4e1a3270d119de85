// Issue #16 items 2 and 3, issue #13 item 5, against a whole holder on loopback (built-in OAuth
// server, both engines), its client address taken from X-Forwarded-For because loopback is a
// trusted proxy here (issue #14 item 1):
//  - the sign-in page is no mail cannon: per interaction, per recipient and per client address;
//    the client's name is capped at registration and quoted, never a link, in the mail;
//  - redirect URIs are https or loopback; registrations are capped in size and per address, and a
//    client nobody allowed expires;
//  - the provider's error page is the holder's own (its headers, no third-party request);
//  - client ID metadata documents are advertised; offline_access is in no challenge or PRM.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { forEachEngine } from "@doorbell/store/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHolder, type Holder } from "../../src/app/holder.js";
import { isLocalMailbox, type MailboxEntry } from "../../src/mail/local-mailbox.js";
import {
  authorizationUrl,
  FormBrowser,
  field,
  freePort,
  type HolderOnLoopback,
  pkce,
  registerClient,
  signedInClient,
} from "../support/oauth-harness.js";

const REDIRECT = "http://127.0.0.1:9/callback";

const register = (origin: string, body: Record<string, unknown>, from = "203.0.113.10") =>
  fetch(`${origin}/oauth/reg`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": from },
    body: JSON.stringify({
      client_name: "Test assistant",
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      application_type: "native",
      ...body,
    }),
  });

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: HolderOnLoopback;
  let holder: Holder;

  beforeAll(async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-oauth-hardening-"));
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    holder = await createHolder({
      dataDir: dir,
      database: engine.url,
      publicUrl: origin,
      env: {},
      log: pino({ level: "silent" }),
      events: false,
      config: { name: "Doorbell demo holder" },
      trustProxy: ["127.0.0.1"],
    });
    await holder.listen(port, "127.0.0.1");
    h = { holder, origin, dir };
  }, 120_000);
  afterAll(async () => {
    await holder?.close();
    if (h !== undefined) fs.rmSync(h.dir, { recursive: true, force: true });
  });

  const mailsTo = async (email: string): Promise<MailboxEntry[]> => {
    const mailer = holder.context.mailer;
    if (!isLocalMailbox(mailer)) throw new Error("no local mailbox");
    return mailer.listMailbox({ to: email });
  };

  /** Opens the sign-in page of a fresh authorization request: the browser, the uid and the form's csrf. */
  const signInPage = async (clientId: string) => {
    const browser = new FormBrowser(h.origin);
    const { challenge } = pkce();
    const opened = await browser.go(
      authorizationUrl(h.origin, { clientId, redirectUri: REDIRECT, scope: "intents:read", challenge }),
    );
    const html = await opened.response.text();
    expect(html).toContain("Send me a sign-in link");
    return { browser, uid: new URL(opened.url).pathname.split("/")[2] as string, csrf: field(html, "csrf") };
  };

  it("refuses a client_name over 100 characters and quotes a shorter one as data, never a link", async () => {
    const long = await register(h.origin, { client_name: "x".repeat(101) });
    expect(long.status).toBe(400);
    expect(((await long.json()) as { error: string }).error).toBe("invalid_client_metadata");

    const clientId = await registerClient(h.origin, REDIRECT, {
      client_name: "Helper. Urgent: verify at https://evil.example/login",
    });
    const { browser, uid, csrf } = await signInPage(clientId);
    const email = "quoted.name@example.sk";
    const sent = await browser.go(`/signin/${uid}/email`, { csrf, email });
    expect(sent.response.status).toBe(200);
    const [mail] = await mailsTo(email);
    expect(mail).toBeDefined();
    expect(mail?.text).toContain("> Helper. Urgent: verify at https[:]//evil[.]example/login");
    expect(mail?.text).not.toContain("https://evil.example");
    expect(mail?.html).not.toContain("evil.example");
    expect(mail?.html).toContain("<blockquote");
  });

  it("sends at most 3 sign-in mails per interaction and per recipient, then answers 429", async () => {
    const clientId = await registerClient(h.origin, REDIRECT);
    const email = "cannon.target@example.sk";
    const first = await signInPage(clientId);
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) {
      const answer = await first.browser.go(`/signin/${first.uid}/email`, { csrf: first.csrf, email });
      statuses.push(answer.response.status);
      if (answer.response.status === 429) expect(answer.response.headers.get("retry-after")).toMatch(/^\d+$/);
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    expect(statuses.slice(3).every((s) => s === 429)).toBe(true);
    expect(await mailsTo(email)).toHaveLength(3);

    // Another sign-in to the same address: its recipient budget is spent too.
    const second = await signInPage(clientId);
    const again = await second.browser.go(`/signin/${second.uid}/email`, { csrf: second.csrf, email });
    expect(again.response.status).toBe(429);
    const page = await again.response.text();
    expect(page).toContain("Too many e-mails");
    // It names the limit (this address's budget is the recipient's) and the flag that changes it.
    expect(page).toContain("the limit mail.recipient (3 per 3600 s) was reached");
    expect(page).toContain("--limit mail.recipient=N/SECONDS");
    expect(page).not.toContain(email);
    expect(await mailsTo(email)).toHaveLength(3);
  });

  it("refuses redirect URIs that are neither https nor loopback", async () => {
    for (const uri of ["http://app.evil.example/cb", "com.example.app:/cb", "javascript:alert(1)"]) {
      const refused = await register(h.origin, { redirect_uris: [uri] }, "203.0.113.20");
      expect(refused.status, uri).toBe(400);
      expect(((await refused.json()) as { error: string }).error, uri).toMatch(
        /^invalid_(redirect_uri|client_metadata)$/,
      );
    }
    for (const uri of ["https://app.example.sk/cb", "http://localhost:4711/cb", "http://[::1]:4711/cb"]) {
      const accepted = await register(
        h.origin,
        { redirect_uris: [uri], application_type: uri.startsWith("https") ? "web" : "native" },
        "203.0.113.21",
      );
      expect(accepted.status, `${uri}: ${await accepted.clone().text()}`).toBe(201);
    }
  });

  it("caps a registration's size and counts registrations per client address", async () => {
    const big = await register(
      h.origin,
      { client_uri: `https://app.example.sk/${"a".repeat(9000)}` },
      "203.0.113.30",
    );
    expect(big.status).toBe(400);

    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await register(h.origin, {}, "2001:db8:77:1::1")).status);
    expect(statuses.slice(0, 10).every((s) => s === 201)).toBe(true);
    expect(statuses[10]).toBe(429);
    // The same /64 is the same client; another address is not.
    expect((await register(h.origin, {}, "2001:db8:77:1:ffff::2")).status).toBe(429);
    expect((await register(h.origin, {}, "2001:db8:77:2::1")).status).toBe(201);
    // Without a trusted proxy's word, X-Forwarded-For from the client itself would not count: the
    // peer here is 127.0.0.1, trusted by this holder's --trust-proxy.
  });

  it("lets a registered client expire unless a person allows it", async () => {
    const clientId = await registerClient(h.origin, REDIRECT);
    const rows = () =>
      holder.context.store.db
        .withTables<{
          holder_oauth_models: { model: string; expires_at: number | null; client_id: string | null };
        }>()
        .selectFrom("holder_oauth_models")
        .select(["model", "expires_at"])
        .where("model", "=", "Client")
        .execute();
    const before = await rows();
    // Every client row that was never allowed carries an end, about a day away.
    expect(before.length).toBeGreaterThan(0);
    for (const row of before) {
      expect(row.expires_at).not.toBeNull();
      expect(Number(row.expires_at) - Date.now()).toBeGreaterThan(23 * 3600_000);
    }
    await signedInClient(h, { clientId, scope: "intents:read", email: "allowing.person@example.sk" });
    const after = await rows();
    expect(after.filter((row) => row.expires_at === null)).toHaveLength(1);
  });

  it("renders the provider's errors in the holder's layout, with its headers and nothing third-party", async () => {
    const answer = await fetch(
      `${h.origin}/oauth/auth?client_id=unknown-client&response_type=code&redirect_uri=${encodeURIComponent(REDIRECT)}`,
    );
    expect(answer.status).toBe(400);
    const html = await answer.text();
    expect(html).toContain("Sign-in stopped");
    expect(html).not.toMatch(/fonts\.googleapis|@import|https?:\/\/(?!127\.0\.0\.1)/);
    expect(answer.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(answer.headers.get("x-frame-options")).toBe("DENY");
    expect(answer.headers.get("referrer-policy")).toBe("no-referrer");
  });

  it("advertises client ID metadata documents and keeps offline_access out of challenges and PRM", async () => {
    const metadata = (await (
      await fetch(`${h.origin}/.well-known/oauth-authorization-server/oauth`)
    ).json()) as Record<string, unknown>;
    expect(metadata.client_id_metadata_document_supported).toBe(true);
    expect(typeof metadata.registration_endpoint).toBe("string");

    const prm = (await (await fetch(`${h.origin}/.well-known/oauth-protected-resource/mcp`)).json()) as {
      scopes_supported: string[];
    };
    expect(prm.scopes_supported).not.toContain("offline_access");
    const challenged = await fetch(`${h.origin}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: "Bearer not-a-token",
      },
      body: "{}",
    });
    expect(challenged.status).toBe(401);
    expect(challenged.headers.get("www-authenticate")).toContain("resource_metadata=");
    expect(challenged.headers.get("www-authenticate")).not.toContain("offline_access");
  });

  it("counts sign-in mails per client address too, whoever they go to", async () => {
    const clientId = await registerClient(h.origin, REDIRECT);
    const statuses: number[] = [];
    // Last: the tests above asked for some from this address (127.0.0.1); the default is 10 an hour.
    for (let i = 0; i < 11 && !statuses.includes(429); i++) {
      const { browser, uid, csrf } = await signInPage(clientId);
      statuses.push(
        (await browser.go(`/signin/${uid}/email`, { csrf, email: `person${i}@example.sk` })).response.status,
      );
    }
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.filter((s) => s === 200).length).toBeLessThan(10);
  });
});
