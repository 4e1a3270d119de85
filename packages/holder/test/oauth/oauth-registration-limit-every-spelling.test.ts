// The registration limit is keyed on the route the authorization server's router picks, not on
// the path as typed. oidc-provider's router (@koa/router) takes any case and an optional trailing
// slash, and koa drops a `#fragment` from the request line, so `/oauth/reg/`, `/oauth/REG` and
// `/oauth/reg#x` all register a client; a limit that compared the path with "/oauth/reg" let each
// of them register without limit. Here every spelling counts against one `oauth.register` limit,
// and spellings the router does not take (double slash, dot segment, percent-encoded letters,
// another case of `/oauth`) register nothing at all, so no client is stored past the limit.
// Requests go over raw HTTP so that the path reaches the holder exactly as written.
import fs from "node:fs";
import { request } from "node:http";
import os from "node:os";
import path from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createHolder, type Holder } from "../../src/app/holder.js";
import { freePort } from "../support/oauth-harness.js";

const LIMIT = 4;

let holder: Holder;
let port: number;
let dir: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-registration-spellings-"));
  port = await freePort();
  holder = await createHolder({
    dataDir: dir,
    publicUrl: `http://127.0.0.1:${port}`,
    env: {},
    log: pino({ level: "silent" }),
    events: false,
    limits: { "oauth.register": { points: LIMIT, durationSeconds: 600 } },
  });
  await holder.listen(port, "127.0.0.1");
}, 120_000);
afterAll(async () => {
  await holder?.close();
  if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
});

/** POSTs a registration to `target`, the request line's path exactly as given. */
function register(target: string): Promise<number> {
  const body = JSON.stringify({
    client_name: "Spelling assistant",
    redirect_uris: ["http://127.0.0.1:9/callback"],
    token_endpoint_auth_method: "none",
    grant_types: ["authorization_code"],
    response_types: ["code"],
    application_type: "native",
  });
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method: "POST",
        path: target,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const storedClients = async () =>
  (
    await holder.context.store.db
      .withTables<{ holder_oauth_models: { model: string } }>()
      .selectFrom("holder_oauth_models")
      .select("model")
      .where("model", "=", "Client")
      .execute()
  ).length;

it("counts registrations through every spelling the router takes against one limit", async () => {
  // Four spellings, one registration each: together they spend the limit.
  for (const spelling of ["/oauth/reg", "/oauth/reg/", "/oauth/REG", "/oauth/rEg/"]) {
    expect(await register(spelling), spelling).toBe(201);
  }
  // Past it, no spelling registers another client.
  for (const spelling of [
    "/oauth/reg",
    "/oauth/reg/",
    "/oauth/REG",
    "/oauth/Reg/",
    "/oauth/REG/",
    "/oauth/reg#again",
    "/oauth/reg?again=1",
  ]) {
    expect(await register(spelling), spelling).toBe(429);
  }
  // What the router does not take is no route at all: nothing registered, nothing counted.
  for (const spelling of ["/oauth//reg", "/oauth/./reg", "/oauth/%72eg", "/oauth/reg//", "/OAUTH/reg"]) {
    expect(await register(spelling), spelling).toBe(404);
  }
  expect(await storedClients()).toBe(LIMIT);
});
