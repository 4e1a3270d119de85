// Client ID Metadata Documents are fetched sparingly: concurrent authorizations of one new
// client_id make one fetch, the cache is keyed on the URL in its normal form, new documents are
// fetched at a small shared rate (distinct query strings cannot make the holder GET a URL at the
// client's own rate), and a declared Content-Length over the cap is refused from the headers.
// Real HTTPS on loopback through the egress; the name resolves through the policy's resolver.
import { readFileSync } from "node:fs";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { closeEgress, type EgressPolicy, productionPolicy } from "@doorbell/webhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { clientMetadataResolver } from "../../src/oauth/client-metadata.js";

const fixture = (name: string) =>
  readFileSync(new URL(`../../../webhooks/test/fixtures/${name}`, import.meta.url));
const CERT = fixture("egress-test-cert.pem");
const HOST = "hook.doorbell.test";
const LOOPBACK = "127.0.0.2";

let server: https.Server;
let port = 0;
const requests: string[] = [];
let answer: (url: string, res: import("node:http").ServerResponse) => void;

const documentFor = (url: string) => ({
  client_id: `https://${HOST}:${port}${url}`,
  client_name: "An assistant",
  redirect_uris: ["http://127.0.0.1:33418/callback"],
  token_endpoint_auth_method: "none",
});

beforeAll(async () => {
  server = https.createServer({ cert: CERT, key: fixture("egress-test-key.pem") }, (req, res) => {
    requests.push(req.url ?? "");
    answer(req.url ?? "", res);
  });
  await new Promise<void>((resolve) => server.listen(0, LOOPBACK, resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const policies: EgressPolicy[] = [];
afterEach(async () => {
  await Promise.all(policies.splice(0).map(closeEgress));
  requests.length = 0;
});
const policy = (timeoutMs = 10_000) => {
  const made = productionPolicy({
    port,
    allowSubnets: [`${LOOPBACK}/32`],
    ca: CERT,
    timeoutMs,
    resolver: async () => [{ address: LOOPBACK, family: 4 }],
  });
  policies.push(made);
  return made;
};
const slowDocument = (url: string, res: import("node:http").ServerResponse) => {
  // Slow enough that every concurrent authorization asks while the first fetch is under way.
  setTimeout(() => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(documentFor(url)));
  }, 150);
};

describe("client metadata fetches", () => {
  it("40 concurrent authorizations of one new client_id make one fetch", async () => {
    answer = slowDocument;
    const resolve = clientMetadataResolver({ policy: policy() });
    const clientId = `https://${HOST}:${port}/client.json`;
    const clients = await Promise.all(Array.from({ length: 40 }, () => resolve(clientId)));
    expect(requests).toEqual(["/client.json"]);
    for (const client of clients)
      expect(client).toMatchObject({ client_id: clientId, client_name: "An assistant" });
    // And later ones are answered from the cache.
    await resolve(clientId);
    expect(requests).toHaveLength(1);
  });

  it("distinct query strings are fetched at a small shared rate, not at the client's", async () => {
    answer = slowDocument;
    const refused: string[] = [];
    const resolve = clientMetadataResolver({
      policy: policy(),
      maxFetchesPerMinute: 5,
      onRefused: (reason) => refused.push(reason),
    });
    const ids = Array.from({ length: 40 }, (_, n) => `https://${HOST}:${port}/client.json?n=${n}`);
    const clients = await Promise.all(ids.map((id) => resolve(id)));
    expect(requests).toHaveLength(5);
    expect(clients.filter((c) => c !== undefined)).toHaveLength(5);
    expect(refused).toContain("too many new client metadata documents to fetch; try again in a minute");
  });

  it("a client_id not in its normal form is no client and is never fetched", async () => {
    answer = slowDocument;
    const resolve = clientMetadataResolver({ policy: policy() });
    for (const id of [
      `https://${HOST.toUpperCase()}:${port}/client.json`,
      `https://${HOST}:${port}/a/../client.json`,
      `https://${HOST}:${port}/./client.json`,
    ]) {
      expect(await resolve(id)).toBeUndefined();
    }
    expect(requests).toEqual([]);
  });

  it("a declared Content-Length over the cap is refused at once, the body neither read nor awaited", async () => {
    let bodyWritten = false;
    answer = (_url, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": "5000000" });
      res.flushHeaders();
      setTimeout(() => {
        bodyWritten = true;
        if (!res.destroyed) res.end("x".repeat(5_000_000));
      }, 4_000).unref();
    };
    const refused: string[] = [];
    const resolve = clientMetadataResolver({ policy: policy(3_000), onRefused: (r) => refused.push(r) });
    const started = Date.now();
    expect(await resolve(`https://${HOST}:${port}/huge.json`)).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(refused).toEqual(["the answer declares 5000000 bytes, more than 16384"]);
    expect(bodyWritten).toBe(false);
  });
});
