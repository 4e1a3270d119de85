// Party key pages and the trust rule: served as a web-standard handler; fetched only from trusted
// origins, through the SSRF-safe egress, never following a redirect, and cached for max-age; the
// sender listed by address, by domain or vouched by DNS TXT; retired and revoked keys judged at
// the time of the signature.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { closeEgress, developmentPolicy, type EgressPolicy } from "@doorbell/webhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildKeyPage,
  checkRecord,
  createKeyPageFetcher,
  createKeyPageHandler,
  createKeyResolver,
  createRecord,
  judgeKeyTime,
  type KeyPage,
  type PageKey,
  parseMessageValue,
  signMessage,
} from "../src/index.js";
import { accept, BUYER, IDS, quote, SELLER, T0, testKey, testPrivateJwk } from "./support.js";

const pub = (name: "seller" | "buyer" | "seller-revoked") => {
  const { kty, crv, x } = testPrivateJwk(name);
  return { kty, crv, x };
};

let sellerPage: KeyPage;
let buyerPage: KeyPage;
let server: http.Server;
let origin: string;
const requests: string[] = [];
let redirectAll = false;
let failAll = false;
let policy: EgressPolicy;

beforeAll(async () => {
  sellerPage = await buildKeyPage({
    party: SELLER.party,
    addresses: [SELLER.address],
    keys: [{ ...pub("seller"), created_at: T0 - 86_400 }],
  });
  buyerPage = await buildKeyPage({
    party: BUYER.party,
    domains: ["buyer.example"],
    keys: [{ ...pub("buyer"), created_at: T0 - 86_400 }],
  });
  const pages = new Map([
    [SELLER.party, sellerPage],
    [BUYER.party, buyerPage],
  ]);
  const handler = createKeyPageHandler({ pageOf: (party) => pages.get(party), maxAgeSeconds: 120 });
  server = http.createServer(async (req, res) => {
    requests.push(req.url ?? "");
    if (failAll) {
      res.writeHead(503);
      res.end();
      return;
    }
    if (redirectAll) {
      res.writeHead(302, { location: `${origin}/elsewhere${req.url}` });
      res.end();
      return;
    }
    const response = await handler(new Request(`${origin}${req.url}`, { method: req.method ?? "GET" }));
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      headers[name] = value;
    });
    res.writeHead(response.status, headers);
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  policy = developmentPolicy();
});
afterAll(async () => {
  await closeEgress(policy);
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const pageUrl = (party: string, at = origin) => `${at}/.well-known/agent-agreements/${party}.json`;

describe("serving key pages", () => {
  const handler = () =>
    createKeyPageHandler({ pageOf: (party) => (party === SELLER.party ? sellerPage : undefined) });

  it("answers GET with the page, cacheable, readable cross-origin, never a redirect", async () => {
    const response = await handler()(new Request(pageUrl(SELLER.party, "https://keys.example")));
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("public, max-age=300");
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await response.json()).toEqual(sellerPage);
    expect(response.headers.get("set-cookie")).toBeNull();
  });

  it("answers HEAD without a body, other methods with 405, unknown parties and paths with 404", async () => {
    const h = handler();
    const head = await h(new Request(pageUrl(SELLER.party, "https://k.example"), { method: "HEAD" }));
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    expect(
      (await h(new Request(pageUrl(SELLER.party, "https://k.example"), { method: "POST" }))).status,
    ).toBe(405);
    expect((await h(new Request(pageUrl(BUYER.party, "https://k.example")))).status).toBe(404);
    expect((await h(new Request("https://k.example/.well-known/agent-agreements/PTY_X.json"))).status).toBe(
      404,
    );
    expect((await h(new Request(`${pageUrl(SELLER.party, "https://k.example")}/x`))).status).toBe(404);
  });

  it("refuses to build a page whose kid is not its key's thumbprint", async () => {
    const { parseKeyPage } = await import("../src/index.js");
    const broken = { ...sellerPage, keys: [{ ...sellerPage.keys[0], kid: buyerPage.keys[0]?.kid }] };
    await expect(parseKeyPage(broken)).rejects.toMatchObject({ code: "ERR_KEY_PAGE_INVALID" });
    await expect(parseKeyPage(sellerPage, BUYER.party)).rejects.toThrow(/is the page of pty_seller/);
  });
});

describe("fetching key pages under the trust rule", () => {
  const request = (party = SELLER.party, address = SELLER.address, at = origin) => ({
    jku: pageUrl(party, at),
    kid: (party === SELLER.party ? sellerPage : buyerPage).keys[0]?.kid as string,
    signer: { address, party },
    issuedAt: T0,
  });

  it("fetches a trusted page over the SSRF-safe egress and finds the key", async () => {
    requests.length = 0;
    const resolve = createKeyResolver({
      trustedOrigins: [origin],
      source: createKeyPageFetcher({ policy }),
      txt: async () => [],
    });
    const key = await resolve(request());
    expect(key).toMatchObject({ party: SELLER.party, vouchedBy: "address", warnings: [] });
    expect(requests).toEqual([`/.well-known/agent-agreements/${SELLER.party}.json`]);
  });

  it("never fetches a jku on another host, or not of the key page form", async () => {
    requests.length = 0;
    const resolve = createKeyResolver({
      trustedOrigins: ["https://api.stackshift.cloud"],
      source: createKeyPageFetcher({ policy }),
    });
    await expect(resolve(request())).rejects.toMatchObject({ code: "ERR_JKU_UNTRUSTED" });
    const trusting = createKeyResolver({
      trustedOrigins: [origin],
      source: createKeyPageFetcher({ policy }),
    });
    for (const jku of [
      `${origin}/keys.json`,
      `${pageUrl(SELLER.party)}?x=1`,
      pageUrl(SELLER.party).replace("127.0.0.1", "user@127.0.0.1"),
    ]) {
      await expect(trusting({ ...request(), jku })).rejects.toMatchObject({ code: "ERR_JKU_UNTRUSTED" });
    }
    expect(requests).toEqual([]);
  });

  it("does not follow a redirect on the key page: the key page could not be fetched", async () => {
    requests.length = 0;
    redirectAll = true;
    try {
      const resolve = createKeyResolver({
        trustedOrigins: [origin],
        source: createKeyPageFetcher({ policy }),
      });
      await expect(resolve(request())).rejects.toThrow(/could not be fetched: .*redirect.*never followed/);
      expect(requests).toHaveLength(1);
    } finally {
      redirectAll = false;
    }
  });

  it("remembers briefly that a page could not be fetched, then asks again", async () => {
    requests.length = 0;
    redirectAll = true;
    let now = 1_000_000;
    try {
      const resolve = createKeyResolver({
        trustedOrigins: [origin],
        source: createKeyPageFetcher({ policy, now: () => now, failureTtlSeconds: 30 }),
        txt: async () => [],
      });
      await expect(resolve(request())).rejects.toMatchObject({ code: "ERR_KEY_PAGE_UNAVAILABLE" });
      await expect(resolve(request())).rejects.toMatchObject({ code: "ERR_KEY_PAGE_UNAVAILABLE" });
      expect(requests).toHaveLength(1);
      redirectAll = false;
      now += 31_000;
      await expect(resolve(request())).resolves.toMatchObject({ party: SELLER.party });
      expect(requests).toHaveLength(2);
    } finally {
      redirectAll = false;
    }
  });

  it("keeps a page for its max-age, then fetches it again", async () => {
    requests.length = 0;
    let now = 1_000_000;
    const resolve = createKeyResolver({
      trustedOrigins: [origin],
      source: createKeyPageFetcher({ policy, now: () => now }),
      txt: async () => [],
    });
    await resolve(request());
    await resolve(request());
    now += 119_000;
    await resolve(request());
    expect(requests).toHaveLength(1);
    now += 2_000;
    await resolve(request());
    expect(requests).toHaveLength(2);
  });

  it("ties the sender by exact address, by listed domain, or by a DNS TXT record of the party id", async () => {
    const asked: string[] = [];
    const txt = async (name: string) => {
      asked.push(name);
      return name === "_agent-agreements.buyer-group.example"
        ? [[BUYER.party.slice(0, 10), BUYER.party.slice(10)]]
        : [];
    };
    const resolve = createKeyResolver({
      trustedOrigins: [origin],
      source: createKeyPageFetcher({ policy }),
      txt,
    });
    expect((await resolve(request(SELLER.party, "SALES@Seller.Example"))).vouchedBy).toBe("address");
    expect((await resolve(request(BUYER.party, "anyone@buyer.example"))).vouchedBy).toBe("domain");
    expect((await resolve(request(BUYER.party, "ops@buyer-group.example"))).vouchedBy).toBe("dns");
    await expect(resolve(request(BUYER.party, "ops@sub.buyer.example"))).rejects.toMatchObject({
      code: "ERR_SENDER_NOT_LISTED",
    });
    await expect(resolve(request(SELLER.party, "other@seller.example"))).rejects.toThrow(
      /does not list the sender other@seller\.example/,
    );
    expect(asked).toEqual([
      "_agent-agreements.buyer-group.example",
      "_agent-agreements.sub.buyer.example",
      "_agent-agreements.seller.example",
    ]);
  });

  it("a failed DNS lookup vouches for nothing", async () => {
    const resolve = createKeyResolver({
      trustedOrigins: [origin],
      source: createKeyPageFetcher({ policy }),
      txt: async () => {
        throw Object.assign(new Error("SERVFAIL"), { code: "ESERVFAIL" });
      },
    });
    await expect(resolve(request(BUYER.party, "ops@buyer-group.example"))).rejects.toMatchObject({
      code: "ERR_SENDER_NOT_LISTED",
    });
  });
});

describe("key time semantics", () => {
  const key = (extra: Partial<PageKey>): PageKey =>
    ({ ...sellerPage.keys[0], created_at: 1000, ...extra }) as PageKey;

  it("a signature made at or after revocation fails with key revoked; an earlier one checks with a warning", () => {
    expect(() => judgeKeyTime(key({ revoked_at: 2000 }), 2000)).toThrow(
      expect.objectContaining({ code: "ERR_KEY_REVOKED" }),
    );
    expect(() => judgeKeyTime(key({ revoked_at: 2000 }), 2001)).toThrow(/^key revoked: /);
    expect(judgeKeyTime(key({ revoked_at: 2000 }), 1999).warnings).toHaveLength(1);
  });

  it("a retired key no longer signs but still checks what it made while active", () => {
    expect(judgeKeyTime(key({ retired_at: 2000 }), 1999).warnings).toEqual([]);
    expect(() => judgeKeyTime(key({ retired_at: 2000 }), 2000)).toThrow(
      expect.objectContaining({ code: "ERR_KEY_RETIRED" }),
    );
  });

  it("a signature dated before the key existed is refused", () => {
    expect(() => judgeKeyTime(key({}), 999)).toThrow(
      expect.objectContaining({ code: "ERR_KEY_NOT_YET_VALID" }),
    );
  });
});

describe("checking a record against key pages served over HTTP", () => {
  it("a fresh two-signature record checks out; the same record with a redirecting page does not", async () => {
    const seller = await testKey("seller");
    const buyer = await testKey("buyer");
    const offer = await signMessage(quote(), seller, { jku: pageUrl(SELLER.party) });
    const acceptance = await signMessage(accept(offer.parsed.hash), buyer, { jku: pageUrl(BUYER.party) });
    const record = await createRecord(
      {
        kind: "two_signatures",
        offer: offer.jws,
        acceptance: acceptance.jws,
        chain: [offer.parsed.hash, acceptance.parsed.hash],
        offerCurrent: true,
      },
      { key: seller, jku: pageUrl(SELLER.party), now: T0 + 8000 },
    );
    const options = {
      trustedOrigins: [origin],
      source: createKeyPageFetcher({ policy }),
      txt: async () => [],
    };
    expect(await checkRecord(JSON.stringify(record), options)).toMatchObject({
      ok: true,
      result: "two_signatures",
    });
    redirectAll = true;
    try {
      const checked = await checkRecord(JSON.stringify(record), {
        ...options,
        source: createKeyPageFetcher({ policy }),
      });
      expect(checked).toMatchObject({ ok: false, code: "ERR_KEY_PAGE_UNAVAILABLE", step: 4 });
      expect(checked.result).toBe("does_not_check_out");
    } finally {
      redirectAll = false;
    }
    expect(parseMessageValue(quote()).message.id).toBe(IDS.quote);
  });

  it("could not check: a key page host that fails or cannot be reached is not a verdict on the record", async () => {
    const seller = await testKey("seller");
    const buyer = await testKey("buyer");
    const offer = await signMessage(quote(), seller, { jku: pageUrl(SELLER.party) });
    const acceptance = await signMessage(accept(offer.parsed.hash), buyer, { jku: pageUrl(BUYER.party) });
    const record = JSON.stringify(
      await createRecord(
        {
          kind: "two_signatures",
          offer: offer.jws,
          acceptance: acceptance.jws,
          chain: [offer.parsed.hash, acceptance.parsed.hash],
          offerCurrent: true,
        },
        { key: seller, jku: pageUrl(SELLER.party), now: T0 + 8000 },
      ),
    );
    failAll = true;
    try {
      const checked = await checkRecord(record, {
        trustedOrigins: [origin],
        source: createKeyPageFetcher({ policy }),
        txt: async () => [],
      });
      expect(checked).toMatchObject({
        ok: false,
        result: "could_not_check",
        code: "ERR_KEY_PAGE_UNREACHABLE",
        step: 4,
      });
      expect(checked.summary).toMatch(/^Could not check: the offer signature: the key page .* server error/);
    } finally {
      failAll = false;
    }
    // A host nobody listens on: the connection is refused.
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const dead = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const offerThere = await signMessage(quote(), seller, { jku: pageUrl(SELLER.party, dead) });
    const acceptThere = await signMessage(accept(offerThere.parsed.hash), buyer, {
      jku: pageUrl(BUYER.party, dead),
    });
    const unreachable = await checkRecord(
      {
        profile: "agent-agreement/1",
        ...JSON.parse(record),
      },
      { trustedOrigins: [dead], source: createKeyPageFetcher({ policy }), txt: async () => [] },
    );
    // The record names the first host, which is not trusted here: a verdict, not a failure to check.
    expect(unreachable).toMatchObject({ result: "does_not_check_out", code: "ERR_JKU_UNTRUSTED" });
    const deadRecord = JSON.stringify(
      await createRecord(
        {
          kind: "two_signatures",
          offer: offerThere.jws,
          acceptance: acceptThere.jws,
          chain: [offerThere.parsed.hash, acceptThere.parsed.hash],
          offerCurrent: true,
        },
        { key: seller, jku: pageUrl(SELLER.party, dead), now: T0 + 8000 },
      ),
    );
    expect(
      await checkRecord(deadRecord, {
        trustedOrigins: [dead],
        source: createKeyPageFetcher({ policy }),
        txt: async () => [],
      }),
    ).toMatchObject({ ok: false, result: "could_not_check", code: "ERR_KEY_PAGE_UNREACHABLE" });
  });
});
