/**
 * THE OAuth flow (issue #8), end to end, against whole holders on loopback (`createHolder({ oauth:
 * {} })` + `listen`), SQLite and PostgreSQL, with the official SDK's OAuth client and the person in
 * headless Chromium:
 *
 *   the SDK's `auth()` discovers the protected resource and the authorization server, registers
 *   dynamically and sends the person to the authorization URL → the person enters the e-mail on
 *   the holder's sign-in page → opens the sign-in mail in the local mailbox → presses the button →
 *   allows on the consent page → the browser lands on the test's loopback redirect server with
 *   `code` and `state` → `transport.finishAuth(code)` → with the token, `intent_publish_intent`
 *   makes an active intent (no consent link), `intent_get_intent` and `intent_list_matches` work for
 *   that client, and a client without a token cannot read it.
 *
 * Then refusals on real tokens: this holder's access token at another holder (401), a replayed
 * authorization code, a revoked refresh token.
 *
 * Chromium: Debian's `chromium` driven by playwright-core. Without /usr/bin/chromium the suite is
 * skipped with a notice, except under CI, where it fails.
 */

import { scopedSignalFetch } from "@doorbell/mcp-endpoint";
import { forEachEngine } from "@doorbell/store/testing";
import { auth } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumSuite, launchChromium, navigates } from "../support/chromium.js";
import { modernPost } from "../support/mcp-harness.js";
import {
  closeHolders,
  EMAIL,
  holderOn,
  MemoryProvider,
  mcpInitialize,
  redirectServer,
  tokenRequest as tokenRequestAt,
  tool,
} from "../support/oauth-harness.js";

const h1 = async (page: Page) => (await page.locator("h1").textContent())?.trim();

const withChromium = chromiumSuite("oauth-full-flow-chromium", "the Chromium OAuth flow");

describe.runIf(withChromium)("the OAuth flow with the SDK's client and headless Chromium", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
    let a: Awaited<ReturnType<typeof holderOn>>;
    let b: Awaited<ReturnType<typeof holderOn>>;
    let redirect: Awaited<ReturnType<typeof redirectServer>>;
    let provider: MemoryProvider;
    let signedIn: Client | undefined;
    let code = "";
    beforeAll(async () => {
      a = await holderOn(engine.url);
      const other = await engine.createDatabase();
      b = await holderOn(other.url);
      redirect = await redirectServer();
      provider = new MemoryProvider(redirect.url);
    }, 60_000);
    afterAll(async () => {
      await signedIn?.close();
      await redirect?.close();
      await closeHolders(a, b);
    });

    /** The SDK's `auth()` up to the redirect, the person in Chromium, back at the redirect URI: the code. */
    async function personAllows(client: MemoryProvider): Promise<string> {
      const mcpUrl = new URL(`${a.origin}/mcp`);
      const arrived = redirect.arrivals.length;
      // 1. The SDK discovers, registers and sends the person to the authorization URL.
      expect(await auth(client, { serverUrl: mcpUrl })).toBe("REDIRECT");
      const authorizationUrl = client.authorizationUrl as URL;
      expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(`${a.origin}/oauth/auth`);
      expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256");
      expect(authorizationUrl.searchParams.get("resource")).toBe(mcpUrl.href);

      // 2. The person, in the browser: the sign-in page asks for the address.
      const context = await browser.newContext({ viewport: { width: 900, height: 900 } });
      const page = await context.newPage();
      const problems: string[] = [];
      page.on("console", (message) => {
        if (message.type() === "error") problems.push(message.text());
      });
      page.on("pageerror", (error) => problems.push(error.message));
      const opened = await page.goto(authorizationUrl.href);
      expect(opened?.status()).toBe(200);
      expect(new URL(page.url()).pathname).toMatch(/^\/signin\//);
      expect(await h1(page)).toBe("Sign in to let an assistant act for you");
      expect(await page.locator("main").textContent()).toContain("Test assistant");
      await page.getByLabel("Your e-mail address").fill(EMAIL);
      await navigates(page, () => page.getByRole("button", { name: "Send me a sign-in link" }).click());
      expect(await h1(page)).toBe("Check your e-mail");

      // 3. The sign-in mail in the local mailbox; its link shows a button; the button signs in.
      const uid = new URL(page.url()).pathname.split("/")[2] as string;
      await page.goto(a.holder.summary.mailboxUrl as string);
      const mails = page.getByRole("link", { name: "Sign in to Doorbell demo holder" });
      let link: string | null = null;
      for (let i = 0; link === null && i < (await mails.count()); i += 1) {
        await page.goto(a.holder.summary.mailboxUrl as string);
        await navigates(page, () => mails.nth(i).click());
        const found = page.locator(`a[href*="/signin/${uid}/link/"]`);
        if ((await found.count()) > 0) link = await found.first().getAttribute("href");
      }
      expect(link).toMatch(new RegExp(`^${a.origin}/signin/${uid}/link/`));
      await page.goto(link as string);
      expect(await h1(page)).toBe("Sign in");
      await navigates(page, () => page.getByRole("button", { name: "Sign in" }).click());

      // 4. The consent page: the assistant, where it goes back, the scopes, the consent text.
      expect(await h1(page)).toBe("Allow Test assistant to act for you?");
      const consent = (await page.locator("main").textContent()) ?? "";
      // Where it goes back is the client's to choose: shown defanged, still readable.
      expect(consent).toContain("127[.]0[.]0[.]1");
      expect(consent).toContain("intents:manage");
      expect(consent).toContain("intents:read");
      await navigates(page, () => page.getByRole("button", { name: "Allow", exact: true }).click());

      // 5. The browser lands on the assistant's redirect URI with a code and the state.
      await expect.poll(() => redirect.arrivals.length).toBe(arrived + 1);
      expect(new URL(page.url()).origin + new URL(page.url()).pathname).toBe(redirect.url);
      const arrival = redirect.arrivals[arrived] as URLSearchParams;
      expect(arrival.get("error")).toBeNull();
      expect(arrival.get("state")).toBe(client.expectedState);
      expect(arrival.get("iss")).toBe(`${a.origin}/oauth`);
      const code = arrival.get("code") ?? "";
      expect(code).not.toBe("");
      expect(problems).toEqual([]);
      await context.close();

      return code;
    }

    it("signs the person in by e-mail link, they allow, and the SDK client acts for them", async () => {
      const mcpUrl = new URL(`${a.origin}/mcp`);
      code = await personAllows(provider);
      // 6. The SDK exchanges the code and connects with the token.
      const transport = new StreamableHTTPClientTransport(mcpUrl, {
        authProvider: provider,
        fetch: scopedSignalFetch(),
      });
      await transport.finishAuth(code);
      expect(provider.saved?.access_token).toBeTruthy();
      expect(provider.saved?.refresh_token).toBeTruthy();
      expect(provider.saved?.scope?.split(" ").sort()).toEqual(["intents:manage", "intents:read"]);
      signedIn = new Client({ name: "signed-in-assistant", version: "1.0.0" });
      await signedIn.connect(transport);

      // 7. Publishing with the token: active at once for the person, no consent link.
      const published = await tool<{
        intent: { id: string; status: string };
        intentCode: string;
        consentUrl?: string;
      }>(signedIn, "intent_publish_intent", {
        statement: "A Škoda Octavia combi, diesel, at most 120,000 km, near Bratislava",
        criteria: {
          category: "vehicles",
          make: "Škoda",
          model: "Octavia",
          fuel: "diesel",
          mileageMaxKm: 120_000,
        },
        area: { country: "SK", region: "SK-BL" },
        budget: { amount: 15_000, currency: "EUR" },
      });
      expect(published.intent.status).toBe("active");
      expect(published.consentUrl).toBeUndefined();
      expect(JSON.stringify(published)).not.toContain("jana.novakova");
      const read = await tool<{ id: string; status: string }>(signedIn, "intent_get_intent", {
        id: published.intent.id,
      });
      expect(read).toMatchObject({ id: published.intent.id, status: "active" });
      const imported = await a.holder.services.offers.importCatalogue([
        {
          source: { kind: "catalogue", ref: `oauth-${engine.dialect}`, seller: "Autobazár Senec" },
          title: "Škoda Octavia Combi 2.0 TDI Style",
          description: "One owner, full service history.",
          category: "vehicles",
          price: { amount: 14_200, currency: "EUR" },
          location: { country: "SK", region: "SK-BL" },
          url: "https://cars.example.sk/octavia-combi-2019",
          attributes: { make: "Škoda", model: "Octavia", year: 2019, mileageKm: 98_000, fuel: "diesel" },
          publishedAt: new Date().toISOString(),
        },
      ]);
      expect(imported.matched).toBe(1);
      const listed = await tool<{ matches: { offer: { title: string } }[] }>(
        signedIn,
        "intent_list_matches",
        {
          intent: published.intent.id,
        },
      );
      expect(listed.matches.map((match) => match.offer.title)).toEqual(["Škoda Octavia Combi 2.0 TDI Style"]);

      // 8. A client without a token cannot read it: the call is answered with the 401 challenge
      // (issue 13: an OAuth-capable client starts sign-in from it), never with the intent.
      const anonymous = new Client({ name: "anonymous", version: "1.0.0" });
      await anonymous.connect(new StreamableHTTPClientTransport(mcpUrl, { fetch: scopedSignalFetch() }));
      try {
        for (const [name, args] of [
          ["intent_get_intent", { id: published.intent.id }],
          ["intent_list_matches", { intent: published.intent.id }],
        ] as const) {
          const refusal = await anonymous.callTool({ name, arguments: args }).then(
            (result) => JSON.stringify(result),
            (error: Error) => `refused: ${error.message}`,
          );
          expect(refusal, name).toMatch(/^refused: .*sign in with OAuth/);
          expect(refusal).not.toContain("Octavia");
        }
        const raw = await fetch(
          mcpUrl,
          modernPost("tools/call", {
            name: "intent_update_intent",
            arguments: { id: published.intent.id, statement: "changed" },
          }),
        );
        expect(raw.status).toBe(401);
        expect(raw.headers.get("www-authenticate")).toMatch(
          /^Bearer resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp", scope="intents:manage"/,
        );
      } finally {
        await anonymous.close();
      }
    }, 120_000);

    it("refuses this holder's access token at another holder", async () => {
      const token = provider.saved?.access_token as string;
      expect(token).toBeTruthy();
      expect((await mcpInitialize(a.origin, token)).status).toBe(200);
      const answer = await mcpInitialize(b.origin, token);
      expect(answer.status).toBe(401);
      expect(answer.headers.get("www-authenticate")).toContain('error="invalid_token"');
    });

    const tokenRequest = (fields: Record<string, string>) => tokenRequestAt(a.origin, fields);

    it("refuses a replayed authorization code and stops the tokens it gave", async () => {
      const token = provider.saved?.access_token as string;
      expect((await mcpInitialize(a.origin, token)).status).toBe(200);
      const replayed = await tokenRequest({
        grant_type: "authorization_code",
        client_id: provider.info?.client_id as string,
        code,
        redirect_uri: redirect.url,
        code_verifier: provider.verifier,
        resource: `${a.origin}/mcp`,
      });
      expect(replayed.status).toBe(400);
      expect(((await replayed.json()) as { error: string }).error).toBe("invalid_grant");
      // OAuth 2.1 §4.1.3: the tokens issued from a replayed code are revoked.
      const after = await mcpInitialize(a.origin, token);
      expect(after.status).toBe(401);
      expect(after.headers.get("www-authenticate")).toContain('error="invalid_token"');
    });
    it("rotates the refresh token, and refuses a used one and a revoked one", async () => {
      // A second assistant, signed in and allowed the same way.
      const second = new MemoryProvider(redirect.url);
      const secondCode = await personAllows(second);
      expect(
        await auth(second, { serverUrl: new URL(`${a.origin}/mcp`), authorizationCode: secondCode }),
      ).toBe("AUTHORIZED");
      const first = second.saved?.refresh_token as string;
      expect(first).toBeTruthy();
      const clientId = second.info?.client_id as string;
      const rotated = await tokenRequest({
        grant_type: "refresh_token",
        refresh_token: first,
        client_id: clientId,
      });
      expect(rotated.status, await rotated.clone().text()).toBe(200);
      const fresh = (await rotated.json()) as { access_token: string; refresh_token: string };
      expect(fresh.refresh_token).not.toBe(first);
      expect((await mcpInitialize(a.origin, fresh.access_token)).status).toBe(200);
      const reused = await tokenRequest({
        grant_type: "refresh_token",
        refresh_token: first,
        client_id: clientId,
      });
      expect(reused.status).toBe(400);
      expect(((await reused.json()) as { error: string }).error).toBe("invalid_grant");

      // The new refresh token, revoked (RFC 7009), no longer refreshes.
      const revoked = await fetch(`${a.origin}/oauth/token/revocation`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          token: fresh.refresh_token,
          token_type_hint: "refresh_token",
          client_id: clientId,
        }),
      });
      expect(revoked.status).toBe(200);
      const refused = await tokenRequest({
        grant_type: "refresh_token",
        refresh_token: fresh.refresh_token,
        client_id: clientId,
      });
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { error: string }).error).toBe("invalid_grant");
      // RFC 7009 §2.1: the access tokens of that grant stop too.
      expect((await mcpInitialize(a.origin, fresh.access_token)).status).toBe(401);
    });
  });
});
