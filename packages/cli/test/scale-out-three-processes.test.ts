/**
 * Issue 14, "What it must show", first bullet: three real `doorbell serve` processes on one
 * PostgreSQL database and one set of seal keys (the same DOORBELL_SEAL_KEYS everywhere), behind a
 * plain round-robin proxy with no stickiness, mail through a real SMTP server on loopback:
 *
 *   modern (2026-07-28, SDK v2) clients publish → the people consent and confirm on the pages
 *   through the proxy → agents subscribe three delivery urls per intent → the people allow them
 *   from the mailed links → each person stops one from two processes at once → a fourth
 *   process imports offers while the receiver holds every doorbell → one serve process holding
 *   doorbells in flight is SIGKILLed → the others take its deliveries over → agents read their
 *   matches → an intent is withdrawn from two processes at once → a fourth intent, published to
 *   live 90 s, expires while all this runs.
 *
 * Asserted: every modern call answered and succeeded (nothing retried); every queued doorbell
 * delivered, a duplicate only with the same webhook-id; order per subscription; each match in one
 * digest mail only; one subscription.ended per subscription (raced stops, a raced withdrawal, an
 * expiry swept by three processes); distinct clients behind the proxy
 * (distinct X-Forwarded-For) have distinct rate-limit buckets, each shared by all processes.
 *
 * PostgreSQL only: several processes on one SQLite file is not the deployment this proves.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "@doorbell/store";
import { type TestDatabase, testEngines } from "@doorbell/store/testing";
import { generateSecret } from "@doorbell/webhooks";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Agent, fetch as undiciFetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  Browser,
  connectedTo,
  doorbell,
  freePort,
  type Mail,
  type Started,
  started,
  startReceiver,
  startSmtp,
  until,
} from "./cluster-harness.js";
import { type RoundRobinProxy, startRoundRobinProxy } from "./round-robin-proxy.js";

/** Tool calls per client per minute: low, so one client can spend its bucket in the test. */
const TOOL_LIMIT = 20;
const PEOPLE = 3;
const URLS_PER_INTENT = 3;

const postgres = testEngines().find((engine) => engine.dialect === "postgres");
if (postgres === undefined) throw new Error("no PostgreSQL test engine");

// ---- clients -----------------------------------------------------------------------------------

/** Every tool call made, and how it ended: the test retries nothing. */
const calls: { client: string; tool: string; outcome: "ok" | "refused" | "failed"; detail?: string }[] = [];

interface ToolResult {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content?: unknown[];
  _meta?: Record<string, unknown>;
}

/**
 * A modern MCP client whose connections to the proxy come from `address` (any of 127.0.0.0/8), so
 * the proxy forwards a distinct X-Forwarded-For for it.
 */
async function modernClient(proxy: RoundRobinProxy, address: string) {
  const dispatcher = new Agent({ localAddress: address });
  const fetchFrom = ((url: string | URL, init?: RequestInit) =>
    undiciFetch(url, { ...(init as object), dispatcher })) as unknown as typeof fetch;
  const client = new Client(
    { name: `agent-${address}`, version: "1.0.0" },
    { versionNegotiation: { mode: "auto" } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(`${proxy.url}/mcp`), { fetch: fetchFrom }));
  const call = async (tool: string, args: Record<string, unknown>): Promise<ToolResult> => {
    try {
      const result = (await client.callTool({ name: tool, arguments: args })) as ToolResult;
      calls.push({
        client: address,
        tool,
        outcome: result.isError ? "refused" : "ok",
        ...(result.isError ? { detail: JSON.stringify(result.content).slice(0, 300) } : {}),
      });
      return result;
    } catch (error) {
      calls.push({ client: address, tool, outcome: "failed", detail: (error as Error).message });
      throw error;
    }
  };
  return {
    address,
    call,
    async ok<T>(tool: string, args: Record<string, unknown>): Promise<T> {
      const result = await call(tool, args);
      if (result.isError) throw new Error(`${tool} was refused: ${JSON.stringify(result.content)}`);
      return result.structuredContent as T;
    },
    async close() {
      await client.close().catch(() => {});
      await dispatcher.close();
    },
  };
}
type ModernClient = Awaited<ReturnType<typeof modernClient>>;

// ---- the scenario ------------------------------------------------------------------------------

interface Person {
  email: string;
  client: ModernClient;
  intentCode: string;
  subscriptions: string[];
}

const octaviaOffers = [1, 2].map((n) => ({
  source: { ref: `SCALE-${n}`, seller: "Autobazár Senec" },
  title: `Škoda Octavia Combi 2.0 TDI (scale-out ${n})`,
  category: "vehicles",
  price: { amount: 13_000 + n * 100, currency: "EUR" },
  location: { country: "SK", region: "SK-BL" },
  url: `https://cars.example.sk/scale-out-${n}`,
  attributes: { make: "Škoda", model: "Octavia", year: 2019, mileageKm: 98_000, fuel: "diesel" },
  publishedAt: "2026-11-29T08:00:00Z",
}));

describe.skipIf(postgres.skipReason !== undefined)(
  "three doorbell serve processes behind a round-robin proxy",
  () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-scale-out-"));
    const env = { DOORBELL_SEAL_KEYS: `scale1:${randomBytes(32).toString("base64")}` };
    const secret = generateSecret();
    const serves: Started[] = [];
    const clients: ModernClient[] = [];
    const people: Person[] = [];
    /** Subscriptions ended from two processes at once, and the intent withdrawn that way. */
    const endedTwice: string[] = [];
    let database: TestDatabase;
    let proxy: RoundRobinProxy;
    let smtp: Awaited<ReturnType<typeof startSmtp>>;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    let killed: Started | undefined;
    /** The intent that expires during the test, with one subscription. */
    let expiring: Person;
    const commonArgs = () => ["--database", database.url, "--smtp", smtp.url, "--public-url", proxy.url];

    const client = async (address: string) => {
      const made = await modernClient(proxy, address);
      clients.push(made);
      return made;
    };
    const mailsTo = (email: string, marker: string) =>
      smtp.mails.filter((mail) => mail.to === email && mail.text.includes(marker));
    const link = (mail: Mail | undefined, kind: string) =>
      mail === undefined
        ? undefined
        : new RegExp(`${proxy.url}(/${kind}/[0-9A-Za-z_-]+)`).exec(mail.text)?.[1];

    // Everything queued is delivered when no outbox row is left past its subscription's progress
    // (PostgreSQL deletes a row once delivered; SQLite would move delivery_progress instead).
    const drained = async () => {
      let left: unknown[] = [];
      await until(
        "every queue drained",
        async () => {
          left = (
            await sql<{ subscription_id: string; seq: number; type: string; attempts: number }>`
              select o.subscription_id, o.seq, o.type, o.attempts from delivery_outbox o
              left join delivery_progress p on p.subscription_id = o.subscription_id
              where o.seq > coalesce(p.delivered_seq, 0)`.execute(database.db.db)
          ).rows;
          return left.length === 0;
        },
        90_000,
      ).catch((error: Error) => {
        throw new Error(`left in the outbox: ${JSON.stringify(left)}\n${error.message}`);
      });
    };
    /** Webhook-ids that arrived more than once (doorbells that came again). */
    const redelivered = () => {
      const seen = new Map<string, number>();
      for (const arrival of receiver.arrivals) {
        if (arrival.type !== "subscription.verification")
          seen.set(arrival.webhookId, (seen.get(arrival.webhookId) ?? 0) + 1);
      }
      return [...seen].filter(([, count]) => count > 1).map(([id]) => id);
    };

    /** A modern client publishes; the person consents and confirms through the proxy. */
    const publishAndConfirm = async (n: number, address: string, validUntil?: string): Promise<Person> => {
      const email = `scale.person${n}@example.sk`;
      const agent = await client(address);
      const published = await agent.ok<{ intentCode: string; consentUrl: string }>("intent_publish_intent", {
        statement: `A Škoda Octavia combi, diesel, near Bratislava (person ${n})`,
        criteria: { category: "vehicles", make: "Škoda", model: "Octavia", fuel: "diesel" },
        area: { country: "SK", region: "SK-BL" },
        budget: { amount: 15_000, currency: "EUR" },
        ...(validUntil === undefined ? {} : { validUntil }),
      });
      expect(published.consentUrl.startsWith(`${proxy.url}/consent/`)).toBe(true);
      const browser = new Browser(proxy.url);
      const given = await browser.submit(new URL(published.consentUrl).pathname, { email, consent: "yes" });
      expect(given.status).toBe(200);
      await until(`the confirmation mail to ${email}`, () => mailsTo(email, "/confirm/").length > 0);
      const confirm = link(mailsTo(email, "/confirm/")[0], "confirm");
      expect(confirm).toBeDefined();
      expect((await browser.submit(confirm as string, {})).status).toBe(200);
      const intent = await agent.ok<{ status: string }>("intent_get_intent", {
        intentCode: published.intentCode,
      });
      expect(intent.status).toBe("active");
      return { email, client: agent, intentCode: published.intentCode, subscriptions: [] };
    };

    beforeAll(async () => {
      database = await postgres.createDatabase();
      smtp = await startSmtp();
      receiver = await startReceiver(secret);
      const ports = [await freePort(), await freePort(), await freePort()];
      proxy = await startRoundRobinProxy(ports.map((port) => `http://127.0.0.1:${port}`));
      const serve = (index: number) => {
        const process = doorbell(
          `serve ${index + 1}`,
          [
            "serve",
            "--port",
            String(ports[index]),
            "--no-demo",
            "--data-dir",
            path.join(dir, `holder-${index + 1}`),
            ...commonArgs(),
            "--webhook-policy",
            "development",
            "--trust-proxy",
            "127.0.0.1/32",
            "--limit",
            `mcp.tool=${TOOL_LIMIT}/60`,
            "--limit",
            "mail.recipient=50/3600,mail.client=200/3600,mail.interaction=50/3600",
          ],
          env,
        );
        serves.push(process);
        return process;
      };
      // All three start at once on the fresh database, as a deployment's replicas do.
      const all = [serve(0), serve(1), serve(2)];
      await Promise.all(all.map((process) => process.waitFor("Ctrl+C stops", 120_000)));
    }, 150_000);

    afterAll(async () => {
      await Promise.allSettled(clients.map((made) => made.close()));
      for (const process of started) if (process.child.exitCode === null) process.child.kill("SIGTERM");
      await Promise.all(started.map((process) => process.exited));
      await proxy?.close();
      await receiver?.close();
      await smtp?.close();
      await postgres.cleanup();
      fs.rmSync(dir, { recursive: true, force: true });
    }, 60_000);

    it("publishes through the proxy; each person consents and confirms on the pages of whichever process answers", async () => {
      for (let i = 0; i < PEOPLE; i++) people.push(await publishAndConfirm(i + 1, `127.0.0.${11 + i}`));
      // One intent lives 90 s only: the expiry sweep, led by one process of three, ends it.
      expiring = await publishAndConfirm(
        PEOPLE + 1,
        "127.0.0.41",
        new Date(Date.now() + 90_000).toISOString(),
      );
      // Round robin reached every process.
      expect(proxy.answered.every((count) => count > 0)).toBe(true);
    }, 90_000);

    it("subscribes three delivery urls per intent; each person allows them from the mailed links", async () => {
      for (const [i, person] of [...people, expiring].entries()) {
        for (let j = 0; j < (person === expiring ? 1 : URLS_PER_INTENT); j++) {
          const answer = await person.client.ok<{ subscriptionId: string; status: string }>(
            "intent_subscribe_events",
            { intentCode: person.intentCode, delivery: { url: receiver.url(`${i}-${j}`), secret } },
          );
          expect(answer.status).toBe("awaiting_verification");
          person.subscriptions.push(answer.subscriptionId);
        }
      }
      for (const person of [...people, expiring]) {
        await until(
          `${person.subscriptions.length} approval mails to ${person.email}`,
          () => mailsTo(person.email, "/notifications/").length >= person.subscriptions.length,
          60_000,
        );
        for (const mail of mailsTo(person.email, "/notifications/")) {
          const approval = link(mail, "notifications") as string;
          const done = await new Browser(proxy.url).submit(approval, {}, `${approval}/allow`);
          expect(done.status).toBe(200);
          expect(done.html).toContain("notifications are allowed");
        }
      }
      // Allowed: each subscription hears that its intent is active.
      const all = [...people, expiring].flatMap((person) => person.subscriptions);
      await until(
        "intent.status.changed at every subscription",
        () =>
          all.every((id) =>
            receiver.verified.some((d) => d.type === "intent.status.changed" && d.data.subscriptionId === id),
          ),
        60_000,
      );
    }, 150_000);

    it("stops a subscription per intent from two processes at once (the person, from the mailed link)", async () => {
      const endedBefore = () =>
        receiver.verified
          .filter((d) => d.type === "subscription.ended")
          .map((d) => String(d.data.subscriptionId));
      expect(endedBefore()).toEqual([]);
      for (const person of people) {
        const approval = link(mailsTo(person.email, "/notifications/")[0], "notifications") as string;
        // Two browsers post "stop" at once: through a round-robin proxy they land on two processes.
        const browsers = [new Browser(proxy.url), new Browser(proxy.url)];
        const forms = await Promise.all(browsers.map((browser) => browser.request(approval)));
        expect(forms.map((form) => form.status)).toEqual([200, 200]);
        const answers = await Promise.all(
          browsers.map((browser) => browser.submit(approval, {}, `${approval}/stop`)),
        );
        expect(answers.some((answer) => answer.status === 200)).toBe(true);
        for (const answer of answers) expect(answer.status).toBeLessThan(500);
      }
      await until("one subscription.ended per intent", () => {
        const ended = new Set(endedBefore());
        return people.every((person) => person.subscriptions.some((id) => ended.has(id)));
      });
      for (const id of new Set(endedBefore())) endedTwice.push(id);
      expect(endedTwice).toHaveLength(PEOPLE);
    }, 90_000);

    it("keeps a rate-limit bucket per client address behind the proxy, shared by every process", async () => {
      const [spender, neighbour] = [await client("127.0.0.90"), await client("127.0.0.91")];
      const code = (people[0] as Person).intentCode;
      const answers: ToolResult[] = [];
      for (let n = 0; n <= TOOL_LIMIT; n++)
        answers.push(await spender.call("intent_get_intent", { intentCode: code }));
      // Spread over three processes by the proxy, yet counted in one bucket: exactly the limit served.
      expect(answers.slice(0, TOOL_LIMIT).every((answer) => !answer.isError)).toBe(true);
      const last = answers[TOOL_LIMIT] as ToolResult;
      expect(last.isError).toBe(true);
      expect(JSON.stringify(last)).toContain("ERR_HOLDER_RATE_LIMITED");
      // Another client behind the same proxy is still served.
      const other = await neighbour.call("intent_get_intent", { intentCode: code });
      expect(other.isError).toBeFalsy();
    }, 60_000);

    it("delivers every doorbell while one process holding some in flight is SIGKILLed", async () => {
      const live = people.flatMap((person) => person.subscriptions).filter((id) => !endedTwice.includes(id));
      receiver.control.hold = true;
      const file = path.join(dir, "offers.json");
      fs.writeFileSync(file, JSON.stringify(octaviaOffers));
      const importer = doorbell(
        "catalogue import",
        ["catalogue", "import", file, "--data-dir", path.join(dir, "importer"), ...commonArgs()],
        env,
      );
      expect(await importer.exited).toBe(0);
      // Every live subscription has its matches doorbell in a process's hands, unanswered.
      await until(
        `${live.length} doorbells held at the receiver`,
        () => receiver.held() >= live.length,
        60_000,
      );

      // A serve process with a connection open to the receiver has a doorbell in flight: kill it.
      const holding = serves.filter((serve) => connectedTo(serve.child.pid, receiver.port) > 0);
      killed = holding[0];
      expect(killed, "no serve process holds a doorbell connection").toBeDefined();
      (killed as Started).child.kill("SIGKILL");
      await (killed as Started).exited;
      receiver.release();

      // The survivors take the dead process's subscriptions over when its leases run out: what it
      // had in flight comes again, with the same webhook-id, and every queue drains.
      await until(
        "a matches doorbell at every live subscription, and a redelivery",
        () =>
          live.every((id) =>
            receiver.verified.some(
              (d) => d.type === "intent.matches.delivered" && d.data.subscriptionId === id,
            ),
          ) && redelivered().length > 0,
        120_000,
      );
      await drained();
      // The agents read their matches through the proxy (a dead backend is skipped, nothing retried).
      for (const person of people) {
        const read = await person.client.ok<{ matches: { offer?: { title?: string } }[] }>(
          "intent_list_matches",
          {
            intentCode: person.intentCode,
          },
        );
        expect(read.matches).toHaveLength(octaviaOffers.length);
      }
      expect(proxy.refused.some((count) => count > 0)).toBe(true);
    }, 200_000);

    it("withdraws an intent from two processes at once: each subscription hears subscription.ended once", async () => {
      const person = people[0] as Person;
      const other = await client("127.0.0.31");
      const both = await Promise.all(
        [person.client, other].map((agent) =>
          agent.call("intent_withdraw_intent", { intentCode: person.intentCode }),
        ),
      );
      expect(both.some((answer) => !answer.isError)).toBe(true);
      const live = person.subscriptions.filter((id) => !endedTwice.includes(id));
      await until(
        "subscription.ended at the withdrawn intent's subscriptions",
        () =>
          live.every((id) =>
            receiver.verified.some((d) => d.type === "subscription.ended" && d.data.subscriptionId === id),
          ),
        90_000,
      );
    }, 120_000);

    it("proves it: calls, doorbells, order, digests and endings", async () => {
      // Every modern call was answered; the only refusals are the rate-limit probe's last call and
      // the loser of each race to end or withdraw the same thing.
      expect(calls.filter((call) => call.outcome === "failed")).toEqual([]);
      const refusedCalls = calls.filter((call) => call.outcome === "refused");
      expect(refusedCalls.filter((call) => call.client === "127.0.0.90")).toHaveLength(1);
      for (const call of refusedCalls.filter((call) => call.client !== "127.0.0.90")) {
        expect(call.tool).toBe("intent_withdraw_intent");
      }

      // The expiry's effect, once: the short-lived intent expired and its subscription heard its
      // end exactly once, though three processes sweep and deliver.
      const [lastOne] = expiring.subscriptions as [string];
      await until(
        "the expired intent's subscription.ended",
        () =>
          receiver.verified.some((d) => d.type === "subscription.ended" && d.data.subscriptionId === lastOne),
        150_000,
      );
      const expiredIntent = await expiring.client.ok<{ status: string }>("intent_get_intent", {
        intentCode: expiring.intentCode,
      });
      expect(expiredIntent.status).toBe("expired");

      const all = [...people, expiring].flatMap((person) => person.subscriptions);
      // Everything queued was delivered.
      await drained();
      const { rows } = await sql<{ subscriber_id: string; queued: number }>`
      select subscriber_id, next_seq - 1 as queued from delivery_subscriptions`.execute(database.db.db);
      const dead = await sql<{ n: number }>`select count(*)::int as n from delivery_dead_letters`.execute(
        database.db.db,
      );
      expect(dead.rows[0]?.n).toBe(0);

      const doorbellsOf = (id: string) => receiver.verified.filter((d) => d.data.subscriptionId === id);
      for (const id of all) {
        const row = rows.find((r) => r.subscriber_id === id);
        const received = doorbellsOf(id);
        // Every queued doorbell arrived, each under its own webhook-id.
        expect(new Set(received.map((d) => d.webhookId)).size).toBe(received.length);
        expect(received.length, `doorbells of ${id}`).toBe(Number(row?.queued));
        // No event twice under two webhook-ids.
        const events = received.map((d) => `${d.type} ${JSON.stringify(d.data)}`);
        expect(new Set(events).size).toBe(events.length);
        // Order kept: the queue's times never go back, and nothing follows subscription.ended.
        const times = received.map((d) => Date.parse(d.timestamp));
        expect(times).toEqual([...times].sort((a, b) => a - b));
        const ended = received.filter((d) => d.type === "subscription.ended");
        expect(ended.length).toBeLessThanOrEqual(1);
        if (ended.length === 1) expect(received.at(-1)?.type).toBe("subscription.ended");
      }
      // Ended once, whoever got there first. Not asserted: the reason. The lease ends at the intent's
      // validUntil, so a delivery worker (packages/delivery/src/worker.ts, the expires_at check in
      // processSubscription) ends it as "lease-expired", with no intent.status.changed "expired"
      // first, before the expiry sweep can say "intent-expired" (reported with issue 14).
      const expiredDoorbells = doorbellsOf(lastOne);
      expect(expiredDoorbells.filter((d) => d.type === "subscription.ended")).toHaveLength(1);
      expect(
        expiredDoorbells.filter((d) => d.type === "intent.status.changed" && d.data.status === "expired")
          .length,
      ).toBeLessThanOrEqual(1);
      // Once-only endings: the raced ones and the withdrawn intent's.
      for (const id of [...endedTwice, ...(people[0] as Person).subscriptions]) {
        expect(
          doorbellsOf(id).filter((d) => d.type === "subscription.ended"),
          id,
        ).toHaveLength(1);
      }

      // Duplicates only with the same webhook-id: every raw copy of an id carries the same bytes;
      // the killed process's doorbells in flight came again, as duplicates.
      const bodies = new Map<string, Set<string>>();
      for (const arrival of receiver.arrivals.filter((a) => a.type !== "subscription.verification")) {
        const seen = bodies.get(arrival.webhookId) ?? new Set<string>();
        seen.add(arrival.body);
        bodies.set(arrival.webhookId, seen);
      }
      for (const [id, seen] of bodies) expect(seen.size, id).toBe(1);
      const doorbellArrivals = receiver.arrivals.filter((a) => a.type !== "subscription.verification");
      expect(doorbellArrivals.length).toBeGreaterThan(bodies.size);

      // Digests once: each match mailed to each person in exactly one digest (the short-lived
      // intent's person at most once: it may have expired before the import).
      for (const person of [...people, expiring]) {
        for (const offer of octaviaOffers) {
          const mailed = mailsTo(person.email, offer.url).length;
          if (person === expiring) expect(mailed).toBeLessThanOrEqual(1);
          else expect(mailed, `${offer.url} to ${person.email}`).toBe(1);
        }
      }
    }, 240_000);
  },
);
