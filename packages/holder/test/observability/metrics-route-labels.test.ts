// A request is counted under the route that answered it: the pattern the router matched, one of
// the routes the holder really has, and never the path a client sent. Route labels used to be made
// from the path (`/oauth/<letters>` passed as a label) with a cap of 64 per process, so 64 junk
// paths used the labels up and every real route seen later was counted as `other`. Here a client
// sends a hundred junk paths first, 80 of them `/oauth/<letters>`; then real routes are counted
// under their own patterns, the junk as one `other`, a registration spelled `/oauth/REG` under
// the provider's `/oauth/reg` route, and the local mailbox without its unguessable path.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createHolder, type Holder } from "../../src/app/holder.js";
import { freePort } from "../support/oauth-harness.js";

let holder: Holder;
let origin: string;
let dir: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-route-labels-"));
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  holder = await createHolder({
    dataDir: dir,
    publicUrl: origin,
    env: {},
    log: pino({ level: "silent" }),
    events: false,
    metrics: {},
  });
  await holder.listen(port, "127.0.0.1");
}, 120_000);
afterAll(async () => {
  await holder?.close();
  if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
});

/** A word of lowercase letters only, distinct for each n (what the old label rule let through). */
const letters = (n: number) =>
  Array.from({ length: 6 }, (_, i) => String.fromCharCode(97 + (Math.floor(n / 26 ** i) % 26))).join("");

/** Each `doorbell_http_requests_total` route label with its count, summed over method and status. */
function requestsByRoute(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of text.split("\n")) {
    const match = /^doorbell_http_requests_total\{.*route="([^"]*)".*\} (\S+)$/.exec(line);
    if (match?.[1] === undefined) continue;
    counts.set(match[1], (counts.get(match[1]) ?? 0) + Number(match[2]));
  }
  return counts;
}

it("counts real routes under their patterns after a flood of junk paths, and the junk as one label", async () => {
  for (let i = 0; i < 80; i++) await (await fetch(`${origin}/oauth/${letters(i)}`)).arrayBuffer();
  for (let i = 0; i < 20; i++) await (await fetch(`${origin}/${letters(i + 500)}`)).arrayBuffer();

  const mailboxUrl = holder.summary.mailboxUrl as string;
  const real: [string, RequestInit?][] = [
    ["/healthz"],
    ["/.well-known/isto-intents.json"],
    ["/oauth/jwks"],
    ["/oauth/token", { method: "POST", body: "grant_type=nothing" }],
    ["/oauth/REG", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }],
    ["/consent/Zq3xR8vT1nW5yB7kL0pD2fH4"],
    [new URL(mailboxUrl).pathname],
  ];
  for (const [route, init] of real) await (await fetch(`${origin}${route}`, init)).arrayBuffer();

  const scrape = await fetch(`${origin}/metrics`);
  expect(scrape.status).toBe(200);
  const text = await scrape.text();
  expect(Object.fromEntries(requestsByRoute(text))).toEqual({
    other: 100,
    "/healthz": 1,
    "/.well-known/isto-intents.json": 1,
    "/oauth/jwks": 1,
    "/oauth/token": 1,
    "/oauth/reg": 1,
    "/consent/:token": 1,
    "/dev/mailbox/:secret": 1,
  });
  // The mailbox's unguessable path is in no label.
  expect(text).not.toContain(new URL(mailboxUrl).pathname.split("/").at(-1));
});
