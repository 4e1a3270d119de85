/**
 * The quick call (a plain 2026-07-28 intent_list_matches answered beside the SDK) answers byte for
 * byte what the SDK answers: a whole holder on loopback, each call sent twice over raw HTTP — once
 * plain (quick), once with `charset=utf-8` on its Content-Type, which the SDK reads the same but
 * the quick call leaves to the SDK — and the two answers compared whole: status, every header but
 * Date, body. /metrics says which path answered. Requests of any other shape go to the SDK,
 * bodies cut short and pipelined requests lose nothing.
 */

import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { forEachEngine, type TestDatabase } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHolder, type Holder } from "../../src/app/holder.js";
import { isLocalMailbox } from "../../src/mail/local-mailbox.js";
import { basicIntent, tokenOf } from "../support/intents-harness.js";
import { freePort } from "../support/loopback.js";
import { carOffer } from "../support/offer-helpers.js";

const TOKEN = "metrics-token-quick-call-test";
const T0 = Date.UTC(2026, 11, 7, 9, 0, 0);
const PLAIN_HEADERS = {
  accept: "application/json, text/event-stream",
  "content-type": "application/json",
  "mcp-method": "tools/call",
  "mcp-name": "intent_list_matches",
  "mcp-protocol-version": "2026-07-28",
};
const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "quick-test", version: "1.0.0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

interface Raw {
  status: number;
  /** Every header but Date, in the order sent, names lower-cased. */
  headers: string[];
  body: string;
}

function post(url: string, body: string, headers: Record<string, string> = PLAIN_HEADERS): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: "POST", headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        const pairs: string[] = [];
        for (let i = 0; i < response.rawHeaders.length; i += 2) {
          const name = (response.rawHeaders[i] ?? "").toLowerCase();
          if (name !== "date") pairs.push(`${name}: ${response.rawHeaders[i + 1]}`);
        }
        resolve({
          status: response.statusCode ?? 0,
          headers: pairs,
          body: Buffer.concat(chunks).toString("utf8"),
        });
      });
    });
    request.on("error", reject);
    request.end(body);
  });
}

const call = (args: Record<string, unknown>, id: string | number = 1, meta: Record<string, unknown> = META) =>
  JSON.stringify({
    method: "tools/call",
    params: { name: "intent_list_matches", arguments: args, _meta: meta },
    jsonrpc: "2.0",
    id,
  });

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let database: TestDatabase;
  let holder: Holder;
  let base: string;
  let mcpUrl: string;
  let dataDir: string;
  let code: string;
  let intentId: string;

  const quickCount = async (): Promise<number> => {
    const text = await (
      await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).text();
    return Number(/^doorbell_mcp_quick_calls_total (\d+)$/m.exec(text)?.[1] ?? Number.NaN);
  };

  /** The call sent plain (quick) and with a charset (the SDK): both answers, and whether quick took the first. */
  async function bothWays(body: string): Promise<{ quick: Raw; sdk: Raw }> {
    const before = await quickCount();
    const quick = await post(mcpUrl, body);
    expect(await quickCount()).toBe(before + 1);
    const sdk = await post(mcpUrl, body, {
      ...PLAIN_HEADERS,
      "content-type": "application/json; charset=utf-8",
    });
    expect(await quickCount()).toBe(before + 1);
    return { quick, sdk };
  }

  beforeAll(async () => {
    database = await engine.createDatabase();
    dataDir = mkdtempSync(path.join(tmpdir(), "doorbell-quick-"));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    mcpUrl = `${base}/mcp`;
    holder = await createHolder({
      database: database.url,
      dataDir,
      publicUrl: base,
      env: {},
      demo: false,
      oauth: false,
      webhookPolicy: "development",
      metrics: { token: TOKEN },
      clock: () => T0,
      limits: { "mcp.tool": { points: 40, durationSeconds: 60 } },
    });
    await holder.listen(port, "127.0.0.1");
    const { intents, consent } = holder.services;
    const mailer = holder.context.mailer;
    if (!isLocalMailbox(mailer)) throw new Error("the test holder uses the local mailbox");
    const published = await intents.publish(basicIntent());
    code = published.intentCode;
    intentId = published.intent.id;
    await consent.giveConsent(tokenOf(published.consentUrl), { email: "quick@example.sk", accepted: true });
    const [mail] = await mailer.listMailbox({ to: "quick@example.sk", limit: 1 });
    await consent.confirmEmail(/\/confirm\/([0-9A-Za-z]+)/.exec(mail?.text ?? "")?.[1] as string);
  });
  afterAll(async () => {
    await holder?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("an empty pull, a pull with matches and a refused pull: the same bytes both ways", async () => {
    const empty = await bothWays(call({ intentCode: code, since: new Date(T0).toISOString() }));
    expect(empty.quick.status).toBe(200);
    expect(empty.quick).toEqual(empty.sdk);
    expect(JSON.parse(empty.quick.body).result.structuredContent.matches).toEqual([]);

    await holder.services.offers.importCatalogue([
      carOffer({ location: { country: "SK", region: "SK-BL" } }, { mileageKm: 98_000, year: 2019 }),
    ]);
    const full = await bothWays(call({ intentCode: code, intent: intentId }, "pull-7"));
    expect(JSON.parse(full.quick.body).result.structuredContent.matches.length).toBeGreaterThan(0);
    expect(full.quick).toEqual(full.sdk);

    const unknown = await bothWays(call({ intentCode: "ic_ThisCodeOpensNothingAtAll12345" }, 2));
    expect(JSON.parse(unknown.quick.body).result.isError).toBe(true);
    expect(unknown.quick).toEqual(unknown.sdk);

    // The code and an intent that is not its own: the holder's own refusal.
    const other = await bothWays(call({ intentCode: code, intent: "int_NotTheIntentOfThisCode" }, 3));
    expect(JSON.parse(other.quick.body).result.isError).toBe(true);
    expect(other.quick).toEqual(other.sdk);
  });

  it("a call the tool's schema refuses, and every other shape, is the SDK's to answer", async () => {
    const before = await quickCount();
    const others: [string, Record<string, string>][] = [
      [call({ intentCode: code, since: "yesterday" }), PLAIN_HEADERS],
      [call({ intentCode: code, extra: 1 }), PLAIN_HEADERS],
      [call({ intentCode: code }, 4, { ...META, progressToken: 5 }), PLAIN_HEADERS],
      [
        call({ intentCode: code }, 5, {
          ...META,
          "io.modelcontextprotocol/clientCapabilities": { roots: {} },
        }),
        PLAIN_HEADERS,
      ],
      [
        call({ intentCode: code }, 6, { ...META, "io.modelcontextprotocol/protocolVersion": "2025-11-25" }),
        PLAIN_HEADERS,
      ],
      [`[${call({ intentCode: code })}]`, PLAIN_HEADERS],
      [call({ intentCode: code }), { ...PLAIN_HEADERS, "mcp-name": "intent_get_intent" }],
      [call({ intentCode: code }), { ...PLAIN_HEADERS, origin: "https://evil.example" }],
      [call({ intentCode: code }), { ...PLAIN_HEADERS, authorization: "Bearer nothing" }],
      [call({ intentCode: code }), { ...PLAIN_HEADERS, "mcp-session-id": "abc" }],
      [call({ intentCode: code }).replace('"id":1', '"id":1.5'), PLAIN_HEADERS],
      ['{"method":"tools/call", "params":', PLAIN_HEADERS],
      [call({ intentCode: code }), { ...PLAIN_HEADERS, host: "rebinding.example" }],
    ];
    for (const [body, headers] of others) {
      const answer = await post(mcpUrl, body, headers);
      expect(answer.status, body).toBeGreaterThanOrEqual(200);
    }
    expect(await quickCount()).toBe(before);
  });

  it("a body cut short loses nothing, and pipelined calls of both kinds answer in order", async () => {
    const body = call({ intentCode: code });
    const url = new URL(mcpUrl);
    await new Promise<void>((resolve) => {
      const socket = connect(Number(url.port), url.hostname, () => {
        const head = Object.entries(PLAIN_HEADERS).map(([name, value]) => `${name}: ${value}\r\n`);
        socket.write(
          `POST /mcp HTTP/1.1\r\nhost: ${url.host}\r\ncontent-length: ${body.length}\r\n${head.join("")}\r\n`,
        );
        socket.end(body.slice(0, 40));
      });
      socket.on("close", () => resolve());
      socket.on("error", () => resolve());
      socket.resume();
    });

    // Five requests on one connection, written at once: quick and SDK calls interleaved.
    const lines: string[] = [];
    for (let id = 10; id < 15; id++) {
      const text = call({ intentCode: code }, id);
      const type = id % 2 === 0 ? "application/json" : "application/json; charset=utf-8";
      const head = Object.entries({ ...PLAIN_HEADERS, "content-type": type }).map(
        ([n, v]) => `${n}: ${v}\r\n`,
      );
      lines.push(
        `POST /mcp HTTP/1.1\r\nhost: ${url.host}\r\ncontent-length: ${Buffer.byteLength(text)}\r\n${head.join("")}\r\n${text}`,
      );
    }
    const received = await new Promise<string>((resolve, reject) => {
      let text = "";
      const socket = connect(Number(url.port), url.hostname, () => socket.write(lines.join("")));
      socket.on("data", (chunk) => {
        text += chunk.toString("utf8");
        if ((text.match(/"jsonrpc":"2.0","id":\d+\}/g) ?? []).length === 5) {
          socket.destroy();
          resolve(text);
        }
      });
      socket.on("error", reject);
    });
    expect([...received.matchAll(/"id":(\d+)\}/g)].map((m) => Number(m[1]))).toEqual([10, 11, 12, 13, 14]);
    expect((await post(mcpUrl, call({ intentCode: code }))).status).toBe(200);
  });

  it("over the limit, the refusal is the same both ways", async () => {
    let refused: Raw | undefined;
    for (let i = 0; i < 60 && refused === undefined; i++) {
      const answer = await post(mcpUrl, call({ intentCode: code }, i));
      if (JSON.parse(answer.body).result?.isError === true) refused = answer;
    }
    expect(refused).toBeDefined();
    const again = await bothWays(call({ intentCode: code }, 99));
    expect(JSON.parse(again.quick.body).result.isError).toBe(true);
    // The wait counts down in whole seconds, and the two answers are read a few ms apart: they may
    // straddle a second. Apart from that second, the bytes are the same.
    const seconds = (raw: Raw): number =>
      JSON.parse(raw.body).result._meta["io.doorbell/error"].retryAfterSeconds;
    expect(Math.abs(seconds(again.quick) - seconds(again.sdk))).toBeLessThanOrEqual(1);
    const withoutSeconds = (raw: Raw): Raw => ({
      ...raw,
      body: raw.body
        .replace(`"retryAfterSeconds":${seconds(raw)}`, '"retryAfterSeconds":N')
        .replace(`try again in ${seconds(raw)} s`, "try again in N s"),
    });
    expect(withoutSeconds(again.quick)).toEqual(withoutSeconds(again.sdk));
  });
});
