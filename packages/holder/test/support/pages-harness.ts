/**
 * The pages on a real loopback HTTP server (Hono + @hono/node-server) over the real services on
 * the engine's database, and a small cookie-keeping client that behaves like a browser's form
 * submission (same-origin Origin and Sec-Fetch-Site, the form's hidden fields).
 */
import type { AddressInfo } from "node:net";
import type { EngineFixture } from "@doorbell/store/testing";
import { type ServerType, serve } from "@hono/node-server";
import { Hono } from "hono";
import { createOfferService } from "../../src/catalogue/service.js";
import { createConsentService } from "../../src/consent/index.js";
import type { HolderConfig } from "../../src/context.js";
import { createIntentService, effectiveStatus } from "../../src/intents/index.js";
import { createMatchingService } from "../../src/matching/service.js";
import type { PublishInput } from "../../src/model/types.js";
import { createTestHolderContext, fakeClock } from "../../src/testing.js";
import { type PagesDeps, personPages } from "../../src/web/person-pages.js";

export { DAY, HOUR, MINUTE, T0 } from "../../src/testing.js";

/** A hidden limit no page may ever show, in any spelling. */
export const HIDDEN_LIMIT = 17_389;
export const HIDDEN_LIMIT_SPELLINGS = ["17389", "17,389", "17 389", "17.389", "17 389"];

export const carIntent = (more: Partial<PublishInput> = {}): PublishInput => ({
  statement: "A Škoda Octavia combi, diesel, at most 120,000 km, near Bratislava",
  criteria: { category: "vehicles", make: "Škoda", model: "Octavia", fuel: "diesel", mileageMaxKm: 120_000 },
  area: { country: "SK", region: "SK-BL" },
  budget: { amount: 15_000, currency: "EUR" },
  hiddenLimit: HIDDEN_LIMIT,
  ...more,
});

/** A catalogue offer that fits `carIntent()`. */
export const octaviaOffer = (ref: string, more: { title?: string; price?: number; url?: string } = {}) => ({
  source: { kind: "catalogue" as const, ref, seller: "Autobazar Test" },
  title: more.title ?? "Škoda Octavia Combi 2.0 TDI Style",
  description: "One owner, full service history.",
  category: "vehicles" as const,
  price: { amount: more.price ?? 14_200, currency: "EUR" as const },
  location: { country: "SK" as const, region: "SK-BL" },
  url: more.url ?? `https://catalogue.example.sk/offers/${ref}`,
  attributes: { make: "Škoda", model: "Octavia", year: 2019, mileageKm: 98_000, fuel: "diesel" },
  publishedAt: "2026-11-29T08:00:00.000Z",
});

export interface PagesServerOptions {
  config?: Partial<HolderConfig>;
  /** Mount the dev mailbox page (default true). */
  mailbox?: boolean;
  /** Replace deps before mounting (to plant failures). */
  deps?: (deps: PagesDeps) => PagesDeps;
}

/**
 * Everything a page test needs: the services wired the way `doorbell serve` wires them (consent
 * hooks drive matching, matching mails the digest), the pages mounted on a Hono app, and that app
 * listening on 127.0.0.1 with `publicUrl` set to its real address.
 */
export async function startPagesServer(engine: EngineFixture, options: PagesServerOptions = {}) {
  const app = new Hono();
  let handler: (request: Request) => Response | Promise<Response> = () =>
    new Response("starting", { status: 503 });
  const server: ServerType = serve({ fetch: (request) => handler(request), hostname: "127.0.0.1", port: 0 });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;

  const clock = fakeClock();
  const ctx = await createTestHolderContext(engine.db, clock.now, {
    reset: true,
    config: { publicUrl: origin, name: "Doorbell test holder", ...options.config },
  });
  const consentHolder: { service?: ReturnType<typeof createConsentService> } = {};
  const matching = createMatchingService(ctx, {
    onMatched: async (intentIds) => {
      for (const id of intentIds) await consentHolder.service?.sendMatchDigest(id);
    },
  });
  const hooks = {
    onActivated: async (id: string) => void (await matching.onActivated(id)),
    onEnded: (id: string) => matching.onEnded(id),
  };
  const consent = createConsentService(ctx, hooks);
  consentHolder.service = consent;
  const intents = createIntentService(ctx, hooks);
  const offers = createOfferService(ctx, matching);
  await matching.start();

  let deps: PagesDeps = {
    consent,
    intents,
    matches: matching,
    config: ctx.config,
    log: ctx.log,
    ...(options.mailbox === false ? {} : { mailbox: ctx.mailbox }),
  };
  if (options.deps) deps = options.deps(deps);
  app.route("/", personPages(deps));
  handler = (request) => app.fetch(request);

  return {
    origin,
    ctx,
    clock,
    consent,
    intents,
    matching,
    offers,
    mailbox: ctx.mailbox,
    browser: () => new FormClient(origin),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type PagesServer = Awaited<ReturnType<typeof startPagesServer>>;

/** The intent's status as the services see it now (expiry included), read from the database. */
export async function statusOf(s: PagesServer, intentId: string) {
  const row = await s.ctx.store.db
    .selectFrom("holder_intents")
    .selectAll()
    .where("id", "=", intentId)
    .executeTakeFirstOrThrow();
  return effectiveStatus(row, s.clock.now());
}

export const tokenOf = (url: string): string => url.slice(url.lastIndexOf("/") + 1);

export interface Page {
  status: number;
  headers: Headers;
  html: string;
}

/** A cookie jar and form poster: what a browser does, minus rendering. */
export class FormClient {
  readonly cookies = new Map<string, string>();
  constructor(readonly origin: string) {}

  private cookieHeader(): string | undefined {
    if (this.cookies.size === 0) return undefined;
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  }

  private keep(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const at = pair?.indexOf("=") ?? -1;
      if (pair !== undefined && at > 0) this.cookies.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
    }
  }

  async request(path: string, init: RequestInit = {}): Promise<Page> {
    const headers = new Headers(init.headers);
    const cookie = this.cookieHeader();
    if (cookie !== undefined && !headers.has("cookie")) headers.set("cookie", cookie);
    const response = await fetch(new URL(path, this.origin), { ...init, headers, redirect: "manual" });
    this.keep(response);
    return { status: response.status, headers: response.headers, html: await response.text() };
  }

  get(path: string): Promise<Page> {
    return this.request(path);
  }

  /**
   * POSTs `fields` as a browser would from a page of this origin: urlencoded, `Origin: null`
   * (our pages are `no-referrer`) and `Sec-Fetch-Site: same-origin`. `headers` override; an
   * undefined value leaves that header out.
   */
  post(
    path: string,
    fields: Record<string, string>,
    headers: Record<string, string | undefined> = {},
  ): Promise<Page> {
    const merged: Record<string, string | undefined> = {
      "content-type": "application/x-www-form-urlencoded",
      origin: "null",
      "sec-fetch-site": "same-origin",
      ...headers,
    };
    const sent = new Headers();
    for (const [name, value] of Object.entries(merged)) if (value !== undefined) sent.set(name, value);
    return this.request(path, {
      method: "POST",
      headers: sent,
      body: new URLSearchParams(fields).toString(),
    });
  }
}

/** The value of the hidden field `name` in the page's (first) form. */
export function hiddenField(html: string, name: string): string | undefined {
  const input = new RegExp(`<input[^>]*name="${name}"[^>]*>`).exec(html)?.[0];
  return input === undefined ? undefined : /value="([^"]*)"/.exec(input)?.[1];
}

/** The text of the page's h1 (tags stripped). */
export function heading(html: string): string | undefined {
  const inner = /<h1[^>]*>([\s\S]*?)<\/h1>/.exec(html)?.[1];
  return inner?.replace(/<[^>]+>/g, "").trim();
}
