/**
 * The operator page through whole holders on loopback (both engines), real HTTP both ways:
 *  - off unless turned on (404); with the metrics token, a request without it gets 401 and a
 *    Basic challenge, one with it (bearer, or as the Basic password) gets the page; an open page
 *    on a holder published beyond loopback is refused at `listen`, as open metrics are;
 *  - real deliveries by two holders on one database (each its own engine, as two processes):
 *    the chart's figures are the sum of both, the failed attempt and the dead letter are listed
 *    with their categories;
 *  - the replay button's form replays the dead letter (the receiver gets it again with its
 *    webhook-id) and answers with a redirect and a notice; a POST without the form token, or from
 *    another site, is refused and replays nothing.
 */
import { once } from "node:events";
import fs from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import type { DeliveryTables } from "@doorbell/delivery";
import { asTables } from "@doorbell/store";
import { forEachEngine } from "@doorbell/store/testing";
import { generateSecret } from "@doorbell/webhooks";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHolder, type Holder } from "../../src/app/holder.js";
import { freePort } from "../support/loopback.js";
import { textNodes, untranslated } from "../support/untranslated.js";

const TOKEN = "operator-token-for-the-test-41c9";
const DAY = 86_400_000;
const bearer = { authorization: `Bearer ${TOKEN}` };
const basic = { authorization: `Basic ${Buffer.from(`ops:${TOKEN}`).toString("base64")}` };

/** A receiver on loopback: answers challenges, then each event with the next scripted status (else 200). */
async function receiver() {
  const events: { webhookId: string; body: string }[] = [];
  const script: number[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const json = JSON.parse(body) as { type?: string; challenge?: string };
      if (json.type === "verification" && typeof json.challenge === "string") {
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify({ challenge: json.challenge }));
      }
      events.push({ webhookId: String(req.headers["webhook-id"]), body });
      res.writeHead(script.shift() ?? 200).end();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/operator-page`,
    events,
    script,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The value of the hidden `csrf` field and the form cookie a GET of the page gave. */
function formOf(html: string, setCookie: string | null): { csrf: string; cookie: string } {
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
  const cookie = /(doorbell_form=[^;]+)/.exec(setCookie ?? "")?.[1];
  if (csrf === undefined || cookie === undefined) throw new Error("the page has no replay form");
  return { csrf, cookie };
}

/** The text of an element with this id, tags removed (the SVG's desc, say). */
const textOf = (html: string, id: string) =>
  new RegExp(`id="${id}"[^>]*>([^<]*)<`).exec(html)?.[1]?.replace(/\s+/g, " ") ?? "";

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-operator-"));
  let database: string;
  let first: Holder;
  let second: Holder;
  let origin: string;
  let otherOrigin: string;
  let hooks: Awaited<ReturnType<typeof receiver>>;

  async function holderOn(port: number, operatorPage: { token?: string } | undefined): Promise<Holder> {
    const holder = await createHolder({
      database,
      dataDir,
      publicUrl: `http://127.0.0.1:${port}`,
      env: {},
      demo: false,
      oauth: false,
      events: false,
      webhookPolicy: "development",
      // No worker: each holder's engine delivers when the test says, so each one's share is known.
      background: false,
      log: pino({ level: "silent" }),
      ...(operatorPage === undefined ? {} : { operatorPage }),
    });
    await holder.listen(port, "127.0.0.1");
    return holder;
  }

  beforeAll(async () => {
    database = (await engine.createDatabase()).url;
    const port = await freePort();
    const otherPort = await freePort();
    origin = `http://127.0.0.1:${port}`;
    otherOrigin = `http://127.0.0.1:${otherPort}`;
    first = await holderOn(port, { token: TOKEN });
    second = await holderOn(otherPort, undefined);
    hooks = await receiver();
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
    await hooks?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const deliveryDb = (holder: Holder) => asTables<DeliveryTables>(holder.context.store).db;
  async function subscribed(holder: Holder, subscriberId: string) {
    const sub = await holder.delivery.subscribe(deliveryDb(holder), {
      channel: "mcp-standard",
      subscriberId,
      url: hooks.url,
      secret: generateSecret(),
      expiresAt: Date.now() + 30 * DAY,
      refreshBefore: Date.now() + 27 * DAY,
      requiresApproval: false,
    });
    await holder.delivery.runDue();
    return sub.id;
  }
  const send = (holder: Holder, id: string, eventId: string) =>
    asTables<DeliveryTables>(holder.context.store).transaction((trx) =>
      holder.delivery.enqueue(trx, id, { type: "incident.created", eventId, data: { eventId } }),
    );

  it("is off unless turned on, and needs the metrics token when it has one", async () => {
    expect((await fetch(`${otherOrigin}/operator`)).status).toBe(404);
    const refused = await fetch(`${origin}/operator`);
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toMatch(/^Basic realm="Doorbell operator"/);
    expect((await fetch(`${origin}/operator`, { headers: { authorization: "Bearer wrong" } })).status).toBe(
      401,
    );
    const wrongBasic = Buffer.from("ops:wrong").toString("base64");
    expect(
      (await fetch(`${origin}/operator`, { headers: { authorization: `Basic ${wrongBasic}` } })).status,
    ).toBe(401);
    // The replay form behind it too: nothing is read before the token.
    const post = await fetch(`${origin}/operator/dead-letters/dlq_x/replay`, { method: "POST" });
    expect(post.status).toBe(401);

    for (const headers of [bearer, basic]) {
      const page = await fetch(`${origin}/operator`, { headers });
      expect(page.status).toBe(200);
      expect(page.headers.get("content-security-policy")).toMatch(/script-src 'none'/);
      expect(page.headers.get("cache-control")).toBe("no-store");
      const html = await page.text();
      expect(html).toContain('<html lang="en">');
      expect(html).toContain("<h1>Deliveries</h1>");
    }
    // In the holder's other languages.
    const slovak = await (await fetch(`${origin}/operator?lang=sk`, { headers: bearer })).text();
    expect(slovak).toContain('<html lang="sk">');
    expect(slovak).toContain("<h1>Doručovanie</h1>");
  });

  it("an open page on a holder published beyond loopback is refused at listen, in one line", async () => {
    const holder = await createHolder({
      database,
      dataDir,
      publicUrl: "https://intents.example.sk",
      env: {},
      demo: false,
      oauth: false,
      events: false,
      background: false,
      log: pino({ level: "silent" }),
      operatorPage: {},
    });
    try {
      await expect(holder.listen(await freePort(), "127.0.0.1")).rejects.toThrow(
        /^the operator page is on without a token, .*DOORBELL_METRICS_TOKEN/,
      );
    } finally {
      await holder.close();
    }
  });

  it("shows both holders' deliveries, the failed attempts and dead letters; the replay button replays", async () => {
    const mine = await subscribed(first, "sub-first-7d2a");
    const theirs = await subscribed(second, "sub-second-3c9e");
    for (const n of [1, 2, 3]) await send(first, mine, `evt_first_${n}`);
    await first.delivery.runDue();
    for (const n of [1, 2]) await send(second, theirs, `evt_second_${n}`);
    await second.delivery.runDue();
    // Two events too large for the receiver: dropped and dead-lettered (MCP Events), the
    // subscription stays active.
    hooks.script.push(413, 413);
    await send(first, mine, "evt_big_1");
    await send(first, mine, "evt_big_2");
    await first.delivery.runDue();
    expect(hooks.events.map((event) => event.webhookId).filter((id) => id.startsWith("evt_big"))).toEqual([
      "evt_big_1",
      "evt_big_2",
    ]);
    // The other holder's counts reach the table at its next flush (every few seconds, or now).
    await second.delivery.flushStats();

    const page = await fetch(`${origin}/operator`, { headers: bearer });
    const html = await page.text();
    // Both holders' deliveries add up in the chart (this holder flushes its own before reading).
    const stats = await deliveryDb(first)
      .selectFrom("delivery_stats")
      .select((eb) => [eb.fn.sum<number>("successes").as("ok"), eb.fn.sum<number>("failures").as("failed")])
      .executeTakeFirstOrThrow();
    expect({ ok: Number(stats.ok), failed: Number(stats.failed) }).toEqual({ ok: 5, failed: 2 });
    expect(textOf(html, "chart-hours-desc")).toMatch(
      /^5 delivered and 2 failed attempts \(71\.4 % delivered\)/,
    );
    expect(textOf(html, "chart-days-desc")).toMatch(/^5 delivered and 2 failed attempts/);
    expect(html).toMatch(/<svg role="img" aria-labelledby="chart-hours-title chart-hours-desc"/);
    expect(html.match(/class="bar-ok"/g)?.length).toBeGreaterThanOrEqual(2);

    // The endpoints, the failed attempts and the dead letters, with their categories.
    expect(html).toContain("sub-first-7d2a");
    expect(html).toContain("sub-second-3c9e");
    expect(html).toContain("MCP Events (SEP-3415)");
    // Each endpoint's health over its window (the delivery log's reader, health.ts).
    expect(html).toMatch(/<td>(Healthy|Failing): 3 delivered, 2 failed<\/td>/);
    expect(html).toMatch(/<td>Healthy: 2 delivered, 0 failed<\/td>/);
    const category = (
      await deliveryDb(first)
        .selectFrom("delivery_attempt_log")
        .select("category")
        .where("subscription_id", "=", mine)
        .executeTakeFirstOrThrow()
    ).category;
    expect(html).toContain(`<code class="failing">${category}</code>`);
    expect(html).toContain("Too large (413)");
    const deadIds = [...html.matchAll(/action="\/operator\/dead-letters\/(dlq_[0-9A-Za-z]+)\/replay"/g)].map(
      (match) => match[1] as string,
    );
    expect(deadIds).toHaveLength(2);
    expect(html).toContain('aria-label="Replay incident.created to sub-first-7d2a"');

    // A forged POST: no form token, or the token sent from another site. Nothing is replayed.
    const [forged, replayed] = deadIds as [string, string];
    const { csrf, cookie } = formOf(html, page.headers.get("set-cookie"));
    const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
    const post = (id: string, body: string, more: Record<string, string> = {}) =>
      fetch(`${origin}/operator/dead-letters/${id}/replay`, {
        method: "POST",
        redirect: "manual",
        headers: { ...bearer, "content-type": "application/x-www-form-urlencoded", cookie, ...more },
        body,
      });
    expect((await post(forged, form({}))).status).toBe(403);
    expect((await post(forged, form({ csrf: "A".repeat(43) }))).status).toBe(403);
    expect((await post(forged, form({ csrf }), { "sec-fetch-site": "cross-site" })).status).toBe(403);
    expect((await post(forged, form({ csrf }), { origin: "https://evil.example" })).status).toBe(403);
    const untouched = await deliveryDb(first)
      .selectFrom("delivery_dead_letters")
      .select("replayed_at")
      .where("id", "=", forged)
      .executeTakeFirstOrThrow();
    expect(untouched.replayed_at).toBeNull();

    // The button's POST: replayed, back to the page with a notice; the worker sends it again.
    const answer = await post(replayed, form({ csrf }), { "sec-fetch-site": "same-origin", origin });
    expect(answer.status).toBe(303);
    expect(answer.headers.get("location")).toBe(`/operator?replayed=${replayed}#dead-letters`);
    const webhookId = (
      await deliveryDb(first)
        .selectFrom("delivery_dead_letters")
        .select("webhook_id")
        .where("id", "=", replayed)
        .executeTakeFirstOrThrow()
    ).webhook_id;
    await first.delivery.runDue();
    expect(hooks.events.filter((event) => event.webhookId === webhookId)).toHaveLength(2);
    const after = await (await fetch(`${origin}/operator?replayed=${replayed}`, { headers: bearer })).text();
    expect(after).toContain(`Dead letter ${replayed} is queued again with its webhook-id`);
    expect(after).not.toContain(`/operator/dead-letters/${replayed}/replay`);
    expect(after).toContain(`/operator/dead-letters/${forged}/replay`);
    // Replaying it again is refused with a notice, and changes nothing.
    const again = await post(replayed, form({ csrf }), { "sec-fetch-site": "same-origin" });
    expect(again.headers.get("location")).toBe("/operator?refused=already#dead-letters");
    const refusedPage = await (await fetch(`${origin}/operator?refused=already`, { headers: bearer })).text();
    expect(refusedPage).toContain("That dead letter was replayed already. Nothing changed.");

    // In Slovak and Czech, with the same data: no English text left (ids, types and categories are code).
    const english = textNodes(await (await fetch(`${origin}/operator?lang=en`, { headers: bearer })).text());
    for (const lang of ["sk", "cs"]) {
      const other = await (await fetch(`${origin}/operator?lang=${lang}`, { headers: bearer })).text();
      expect(other).toContain(`<html lang="${lang}">`);
      expect(
        untranslated(english, textNodes(other), [
          first.summary.name,
          "UTC",
          " ms",
          "SEP-3415",
          "HTTP",
          "webhook-id",
        ]),
      ).toEqual([]);
    }
  });
});
