// getJson refuses an answer whose declared Content-Length is over its cap at once, from the
// headers: it neither reads the body nor waits for one that a slow server trickles or never sends.
import { describe, expect, it } from "vitest";
import { getJson, productionPolicy } from "../src/egress/index.js";
import { egressTestBed, TEST_CERT, TEST_HOST } from "./egress-helpers.js";

const LEGIT = "127.0.0.2";
const bed = egressTestBed();

describe("getJson and a declared Content-Length over the cap", () => {
  it("is too_large at once, without reading the body or waiting for it", async () => {
    bed.dns.answer([LEGIT]);
    let bodyWritten = false;
    const server = await bed.serve({
      host: LEGIT,
      handler: (_req, res) => {
        res.writeHead(200, { "content-type": "application/json", "content-length": "10000000" });
        res.flushHeaders();
        // The body would come only after the deadline: a client that waits for it times out.
        setTimeout(() => {
          bodyWritten = true;
          if (!res.destroyed) res.end("x".repeat(10_000_000));
        }, 4_000).unref();
      },
    });
    const policy = bed.keep(
      productionPolicy({
        port: server.port,
        allowSubnets: [`${LEGIT}/32`],
        ca: TEST_CERT,
        resolver: bed.dns.resolver,
        timeoutMs: 3_000,
      }),
    );
    const result = await getJson({
      url: `https://${TEST_HOST}:${server.port}/doc.json`,
      policy,
      maxBytes: 1024,
    });
    expect(result).toMatchObject({
      ok: false,
      category: "too_large",
      reason: "the answer declares 10000000 bytes, more than 1024",
      status: 200,
    });
    expect(result.durationMs).toBeLessThan(1_500);
    expect(bodyWritten).toBe(false);
  });

  it("still reads an answer whose declared length is within the cap", async () => {
    bed.dns.answer([LEGIT]);
    const server = await bed.serve({
      host: LEGIT,
      handler: (_req, res) => {
        res.writeHead(200, { "content-type": "application/json", "content-length": "11" });
        res.end('{"ok":true}');
      },
    });
    const policy = bed.keep(
      productionPolicy({
        port: server.port,
        allowSubnets: [`${LEGIT}/32`],
        ca: TEST_CERT,
        resolver: bed.dns.resolver,
      }),
    );
    const result = await getJson({
      url: `https://${TEST_HOST}:${server.port}/doc.json`,
      policy,
      maxBytes: 11,
    });
    expect(result).toMatchObject({ ok: true, json: { ok: true } });
  });
});
