/**
 * A real intent holder (`createHolder` from @doorbell/holder: SQLite in a temp dir, local mailbox)
 * served on a loopback port, on a clock the test moves, and the person's side of consent done
 * through the holder's own services (an agent can never do that part).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type CatalogueOfferInput, createHolder, type Holder, isLocalMailbox } from "@doorbell/holder";
import { pino } from "pino";
import { HolderClient, type HolderClientOptions } from "../src/index.js";

export const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);
export const SECOND = 1_000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;

export function fakeClock(start = T0) {
  let current = start;
  return {
    now: () => current,
    advance: (ms: number) => {
      current += ms;
      return current;
    },
  };
}

export interface RunningHolder {
  holder: Holder;
  mcpUrl: string;
  clock: ReturnType<typeof fakeClock>;
  dir: string;
  client(options?: Partial<HolderClientOptions>): Promise<HolderClient>;
  /** Publishes over MCP, then gives consent and confirms the e-mail as the person would: an active intent. */
  activeIntent(email?: string): Promise<{ intentCode: string; intentId: string }>;
  /**
   * The person allows the newest doorbell subscription asked of them, from the link the holder
   * mailed to `email` (push rule 3); waits up to `ms` for that mail.
   */
  allowDoorbells(email: string, ms?: number): Promise<void>;
  /** Adds catalogue offers that match `activeIntent`'s statement; the holder records the matches at `clock.now()`. */
  addOffers(count: number): Promise<void>;
  close(): Promise<void>;
}

let counter = 0;

/** `realClock`: for a second process or command that signs and checks times with the real clock. */
export async function startHolder(
  options: { realClock?: boolean; webhookPolicy?: "production" | "development" } = {},
): Promise<RunningHolder> {
  const clock = options.realClock ? { now: () => Date.now(), advance: realClockCannotAdvance } : fakeClock();
  const dir = mkdtempSync(join(tmpdir(), "doorbell-agent-holder-"));
  const holder = await createHolder({
    dataDir: dir,
    clock: clock.now,
    log: pino({ level: "silent" }),
    mcp: { toolRateLimit: false, sessionRateLimit: false },
    ...(options.webhookPolicy === undefined ? {} : { webhookPolicy: options.webhookPolicy }),
    env: {},
  });
  const { url } = await holder.listen(0, "127.0.0.1");
  const mcpUrl = `${url}/mcp`;
  const clients: HolderClient[] = [];
  return {
    holder,
    mcpUrl,
    clock,
    dir,
    async client(options = {}) {
      const client = await HolderClient.connect({ url: mcpUrl, clock: clock.now, ...options });
      clients.push(client);
      return client;
    },
    async activeIntent(email = `person${++counter}@example.sk`) {
      const client = await HolderClient.connect({ url: mcpUrl, clock: clock.now });
      try {
        const published = await client.publish({
          statement: "A Škoda Octavia combi, diesel, near Bratislava",
          criteria: { category: "vehicles", make: "Škoda", model: "Octavia", fuel: "diesel" },
          area: { country: "SK", region: "SK-BL" },
          budget: { amount: 20_000, currency: "EUR" },
        });
        const token = published.consentUrl.slice(published.consentUrl.lastIndexOf("/") + 1);
        await holder.services.consent.giveConsent(token, { email, accepted: true });
        const mailer = holder.context.mailer;
        if (!isLocalMailbox(mailer)) throw new Error("the test holder must use the local mailbox");
        const [mail] = await mailer.listMailbox({ to: email, limit: 1 });
        const confirm = mail === undefined ? undefined : /\/confirm\/([0-9A-Za-z]+)/.exec(mail.text)?.[1];
        if (confirm === undefined) throw new Error("no confirmation mail");
        await holder.services.consent.confirmEmail(confirm);
        return { intentCode: published.intentCode, intentId: published.intent.id };
      } finally {
        await client.close();
      }
    },
    async allowDoorbells(email, ms = 15_000) {
      const mailer = holder.context.mailer;
      const push = holder.services.push;
      if (!isLocalMailbox(mailer) || push === undefined) throw new Error("the test holder must offer push");
      const deadline = Date.now() + ms;
      for (;;) {
        const mails = await mailer.listMailbox({ to: email, limit: 20 });
        const mail = mails.find((entry) => entry.subject.startsWith("Allow an assistant"));
        const token = mail === undefined ? undefined : /\/notifications\/([0-9A-Za-z]+)/.exec(mail.text)?.[1];
        if (token !== undefined) {
          await push.approveByToken(token);
          return;
        }
        if (Date.now() > deadline) throw new Error(`no approval mail to ${email}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    async addOffers(count) {
      const offers: CatalogueOfferInput[] = [];
      for (let i = 0; i < count; i++) offers.push(octavia());
      await holder.services.offers.importCatalogue(offers);
    },
    async close() {
      await Promise.allSettled(clients.map((client) => client.close()));
      await holder.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function realClockCannotAdvance(): number {
  throw new Error("this holder runs on the real clock");
}

export function octavia(): CatalogueOfferInput {
  counter += 1;
  return {
    source: { kind: "catalogue", ref: `agent-test-${counter}`, seller: "Autobazár Senec" },
    title: `Škoda Octavia Combi 2.0 TDI #${counter}`,
    category: "vehicles",
    price: { amount: 13_900 + counter, currency: "EUR" },
    location: { country: "SK", region: "SK-BL" },
    url: `https://cars.example.sk/octavia-${counter}`,
    attributes: { make: "Škoda", model: "Octavia", year: 2019, mileageKm: 98_000, fuel: "diesel" },
    publishedAt: new Date(T0 - HOUR).toISOString(),
  };
}
