/**
 * Shared by the OAuth tests (issue #8): whole holders on loopback with OAuth on, the assistant's
 * loopback redirect server and in-memory `OAuthClientProvider` for the SDK's client, MCP calls with
 * a token, and the person's sign-in driven with fetch through the holder's own pages (plain HTML
 * forms: a cookie jar, the form's CSRF field, the sign-in link read from the local mailbox), as a
 * browser without JavaScript would.
 */
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type net from "node:net";
import os from "node:os";
import path from "node:path";
import { scopedSignalFetch } from "@doorbell/mcp-endpoint";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { pino } from "pino";
import { expect } from "vitest";
import { createHolder, type Holder } from "../../src/app/holder.js";
import { isLocalMailbox } from "../../src/mail/local-mailbox.js";
import type { HolderOAuthOptions } from "../../src/oauth/index.js";
import { freePort } from "./loopback.js";

export { freePort };

export const EMAIL = "jana.novakova@example.sk";
export const SCOPE = "intents:read intents:manage";

export interface HolderOnLoopback {
  holder: Holder;
  origin: string;
  dir: string;
}

/**
 * One set of seal keys for every holder these tests start: holders on one database must share
 * their keys (issue 14: a different keyring is refused).
 */
const SEAL_KEYS = `oauthtest:${randomBytes(32).toString("base64")}`;

/** A whole holder with OAuth on (built-in server unless `oauth` says otherwise), listening on loopback. */
export async function holderOn(database: string, oauth: HolderOAuthOptions = {}): Promise<HolderOnLoopback> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-oauth-flow-"));
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const holder = await createHolder({
    dataDir: dir,
    database,
    publicUrl: origin,
    env: { DOORBELL_SEAL_KEYS: SEAL_KEYS },
    log: pino({ level: "silent" }),
    events: false,
    config: { name: "Doorbell demo holder" },
    oauth,
    // These tests sign the same person in many times; the mail limits have their own test.
    limits: {
      "mail.recipient": { points: 1000, durationSeconds: 3600 },
      "mail.client": { points: 1000, durationSeconds: 3600 },
    },
  });
  await holder.listen(port, "127.0.0.1");
  return { holder, origin, dir };
}

export async function closeHolders(...holders: (HolderOnLoopback | undefined)[]): Promise<void> {
  for (const h of holders) {
    if (h === undefined) continue;
    await h.holder.close();
    fs.rmSync(h.dir, { recursive: true, force: true });
  }
}

/** The assistant's loopback redirect URI: captures `code` and `state` of each arrival. */
export async function redirectServer(): Promise<{
  url: string;
  arrivals: URLSearchParams[];
  close(): Promise<void>;
}> {
  const arrivals: URLSearchParams[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname === "/callback") arrivals.push(url.searchParams);
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end('<!doctype html><html lang="en"><title>Done</title><h1>You can close this window</h1></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/callback`,
    arrivals,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** An `OAuthClientProvider` kept in memory, as an assistant would keep it. */
export class MemoryProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = "";
  authorizationUrl: URL | undefined;
  readonly expectedState = `state-${Math.random().toString(36).slice(2)}`;
  constructor(private readonly redirect: string) {}
  get redirectUrl(): string {
    return this.redirect;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "Test assistant",
      redirect_uris: [this.redirect],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      scope: SCOPE,
    };
  }
  state(): string {
    return this.expectedState;
  }
  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.info = info;
  }
  tokens(): OAuthTokens | undefined {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    return this.verifier;
  }
}

/** A tool's structured result; throws with the content when the tool refused. */
/** A 2025-11-25 MCP client that sends this bearer token (if any) on every request. */
export async function connectWith(origin: string, token?: string): Promise<Client> {
  const client = new Client({ name: "assistant", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), {
      fetch: scopedSignalFetch(),
      ...(token === undefined ? {} : { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
    }),
  );
  return client;
}

export async function tool<T>(client: Client, name: string, args: Record<string, unknown>): Promise<T> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (result.isError) throw new Error(`${name} was refused: ${JSON.stringify(result.content)}`);
  return result.structuredContent as T;
}

/** An MCP `initialize` with a bearer token (the cheapest request that passes the resource's check). */
export const mcpInitialize = (origin: string, token: string) =>
  fetch(`${origin}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    }),
  });

export const tokenRequest = (origin: string, fields: Record<string, string>) =>
  fetch(`${origin}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields),
  });

/** Registers a public client dynamically (RFC 7591); its client_id. */
export async function registerClient(
  origin: string,
  redirectUri: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const registered = await fetch(`${origin}/oauth/reg`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      client_name: "Test assistant",
      redirect_uris: [redirectUri],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      application_type: "native",
      ...extra,
    }),
  });
  expect(registered.status, await registered.clone().text()).toBe(201);
  return ((await registered.json()) as { client_id: string }).client_id;
}

/** A browser's cookies for one origin: enough for the provider's and the pages' cookies. */
class CookieJar {
  private readonly cookies = new Map<string, string>();
  store(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = "", ...attributes] = line.split(";");
      const at = pair.indexOf("=");
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      const gone = attributes.some((attribute) => {
        const [key = "", val = ""] = attribute.split("=").map((part) => part.trim());
        if (key.toLowerCase() === "max-age") return Number(val) <= 0;
        if (key.toLowerCase() === "expires") return Date.parse(val) <= Date.now();
        return false;
      });
      if (gone || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  }
}

/** A person's browser on one holder: follows redirects on the holder, stops where it leaves it. */
export class FormBrowser {
  private readonly jar = new CookieJar();
  /** `headers` go with every request (e.g. the browser's `accept-language`). */
  constructor(
    private readonly origin: string,
    private readonly headers: Record<string, string> = {},
  ) {}

  /** GET (or the POST of a form), following redirects within the holder; the last answer and its URL. */
  async go(url: string, form?: Record<string, string>): Promise<{ response: Response; url: string }> {
    let at = new URL(url, this.origin).href;
    let response = await this.request(at, form);
    for (let hops = 0; hops < 10 && response.status >= 300 && response.status < 400; hops += 1) {
      const next = new URL(response.headers.get("location") ?? "", at);
      if (next.origin !== this.origin) return { response, url: next.href };
      at = next.href;
      response = await this.request(at);
    }
    return { response, url: at };
  }

  private async request(url: string, form?: Record<string, string>): Promise<Response> {
    const response = await fetch(url, {
      method: form === undefined ? "GET" : "POST",
      redirect: "manual",
      headers: {
        ...this.headers,
        cookie: this.jar.header(),
        ...(form === undefined
          ? {}
          : { "content-type": "application/x-www-form-urlencoded", origin: this.origin }),
      },
      ...(form === undefined ? {} : { body: new URLSearchParams(form) }),
    });
    this.jar.store(response);
    return response;
  }
}

/** The value of a hidden field of a page's form. */
export function field(html: string, name: string): string {
  const found = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  if (found?.[1] === undefined) throw new Error(`no ${name} field on the page:\n${html.slice(0, 2000)}`);
  return found[1];
}

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/** The authorization URL of a public client with PKCE S256 for this holder's MCP endpoint. */
export function authorizationUrl(
  origin: string,
  request: { clientId: string; redirectUri: string; scope: string; challenge: string; state?: string },
): string {
  return `${origin}/oauth/auth?${new URLSearchParams({
    client_id: request.clientId,
    response_type: "code",
    redirect_uri: request.redirectUri,
    scope: request.scope,
    resource: `${origin}/mcp`,
    state: request.state ?? "s",
    code_challenge: request.challenge,
    code_challenge_method: "S256",
  })}`;
}

/** What the person is shown on the way: the client's name as the pages show it, and each page. */
export interface PersonSees {
  /** The name the consent page asks about (default "Test assistant"). */
  clientName?: string;
  /** Each holder page the person read (the sign-in page, the consent page), pushed in order. */
  pages?: string[];
}

/**
 * The person in a form-only browser: opens the authorization URL, gives the address on the
 * holder's sign-in page, opens the link of the sign-in mail (local mailbox), presses "Sign in",
 * then "Allow" on the consent page (skipped when the browser is signed in and the grant already
 * covers the request). The URL the holder finally sends the browser to (the redirect URI).
 */
export async function personAllowsByForms(
  h: HolderOnLoopback,
  browser: FormBrowser,
  url: string,
  email: string = EMAIL,
  sees: PersonSees = {},
): Promise<URL> {
  let { response, url: at } = await browser.go(url);
  if (new URL(at).origin !== h.origin) return new URL(at);
  expect(response.status, await response.clone().text()).toBe(200);
  let html = await response.text();
  sees.pages?.push(html);
  if (html.includes("Send me a sign-in link")) {
    const uid = new URL(at).pathname.split("/")[2] as string;
    const sent = await browser.go(`/signin/${uid}/email`, { csrf: field(html, "csrf"), email });
    expect(await sent.response.text()).toContain("Check your e-mail");
    const mailer = h.holder.context.mailer;
    if (!isLocalMailbox(mailer)) throw new Error("the holder has no local mailbox");
    const mail = (await mailer.listMailbox({ to: email })).find((m) =>
      m.text.includes(`/signin/${uid}/link/`),
    );
    const link = /https?:\/\/\S+\/signin\/\S+\/link\/[A-Za-z0-9_-]+/.exec(mail?.text ?? "")?.[0];
    expect(link).toBeDefined();
    const linkPage = await browser.go(link as string);
    expect(linkPage.response.status).toBe(200);
    ({ response, url: at } = await browser.go(link as string, {
      csrf: field(await linkPage.response.text(), "csrf"),
    }));
    if (new URL(at).origin !== h.origin) return new URL(at);
    expect(response.status).toBe(200);
    html = await response.text();
    sees.pages?.push(html);
  }
  expect(html).toContain(`Allow ${sees.clientName ?? "Test assistant"} to act for you?`);
  const uid = new URL(at).pathname.split("/")[2] as string;
  const allowed = await browser.go(`/signin/${uid}/approve`, {
    csrf: field(html, "csrf"),
    consentVersion: field(html, "consentVersion"),
  });
  return new URL(allowed.url);
}

export interface IssuedTokens {
  access_token: string;
  refresh_token?: string;
  scope?: string;
  expires_in?: number;
}

/** Registers a client, the person signs in and allows, the code is exchanged: the client and its tokens. */
export async function signedInClient(
  h: HolderOnLoopback,
  options: {
    scope?: string;
    browser?: FormBrowser;
    clientId?: string;
    email?: string;
    sees?: PersonSees;
  } = {},
): Promise<{ clientId: string; tokens: IssuedTokens; browser: FormBrowser }> {
  const redirectUri = "http://127.0.0.1:9/callback";
  const clientId = options.clientId ?? (await registerClient(h.origin, redirectUri));
  const browser = options.browser ?? new FormBrowser(h.origin);
  const { verifier, challenge } = pkce();
  const arrived = await personAllowsByForms(
    h,
    browser,
    authorizationUrl(h.origin, { clientId, redirectUri, scope: options.scope ?? SCOPE, challenge }),
    options.email,
    options.sees,
  );
  expect(arrived.origin + arrived.pathname).toBe(redirectUri);
  expect(arrived.searchParams.get("error"), arrived.href).toBeNull();
  const exchanged = await tokenRequest(h.origin, {
    grant_type: "authorization_code",
    client_id: clientId,
    code: arrived.searchParams.get("code") ?? "",
    redirect_uri: redirectUri,
    code_verifier: verifier,
    resource: `${h.origin}/mcp`,
  });
  expect(exchanged.status, await exchanged.clone().text()).toBe(200);
  return { clientId, tokens: (await exchanged.json()) as IssuedTokens, browser };
}
