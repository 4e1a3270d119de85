/**
 * Two parties for the transport tests: each with an Ed25519 message key on a key page (served to
 * the core's trust rule from pages, as a checker reads files), an Ed25519 DKIM key published in a
 * DNS zone the tests inject into mailauth, and builders for the messages of a quote thread.
 */
import { generateKeyPairSync } from "node:crypto";
import { MESSAGE_CONTEXT } from "../src/constants.js";
import { type DkimKey, dkimTxtRecord } from "../src/email/dkim.js";
import type { ReceiverState } from "../src/inbox/receiver-checks.js";
import type { SigningKey } from "../src/jws/keys.js";
import { generateSigningKey } from "../src/jws/keys.js";
import type { KeyResolver } from "../src/jws/resolver.js";
import { buildKeyPage, createKeyResolver, type KeyPage, staticKeyPages } from "../src/keys/index.js";
import { newId, newNonce } from "../src/message/ids.js";
import type { Accept, AskQuote, Message, Quote } from "../src/message/types.js";

export const TRUSTED = "https://api.stackshift.cloud";

export interface Party {
  readonly party: string;
  readonly address: string;
  readonly domain: string;
  readonly org: string;
  readonly jku: string;
  readonly key: SigningKey;
  readonly dkim: DkimKey;
  readonly dkimTxt: string;
  readonly page: KeyPage;
}

/** A party whose key page lives on `origin` (the profile's trusted host unless a test serves its own). */
export async function makeParty(
  name: string,
  party: string,
  createdAt = 1_700_000_000,
  origin = TRUSTED,
): Promise<Party> {
  const domain = `${name}.example`;
  const address = `agent@${domain}`;
  const { signingKey } = await generateSigningKey();
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  return {
    party,
    address,
    domain,
    org: `${name[0]?.toUpperCase()}${name.slice(1)} s.r.o.`,
    jku: `${origin}/.well-known/agent-agreements/${party}.json`,
    key: signingKey,
    dkim: {
      domain,
      selector: "agent1",
      privateKey: privateKey.export({ format: "pem", type: "pkcs8" }).toString(),
      algorithm: "ed25519-sha256",
    },
    dkimTxt: dkimTxtRecord(publicKey),
    page: await buildKeyPage({
      party,
      addresses: [address],
      keys: [{ ...signingKey.publicJwk, created_at: createdAt }],
    }),
  };
}

export async function makeParties() {
  const seller = await makeParty("seller", "pty_sellerparty000000001");
  const buyer = await makeParty("buyer", "pty_buyerparty0000000001");
  return { seller, buyer };
}

/** The core's trust rule over the parties' pages. */
export async function resolverFor(...parties: Party[]): Promise<KeyResolver> {
  return createKeyResolver({
    trustedOrigins: [TRUSTED],
    source: await staticKeyPages(parties.map((p) => p.page)),
    txt: async () => [],
  });
}

/** A DNS zone for mailauth's injected resolver: the parties' DKIM keys, NXDOMAIN for anything else. */
export function dnsZone(...parties: Party[]) {
  const txt = new Map(parties.map((p) => [`${p.dkim.selector}._domainkey.${p.domain}`, p.dkimTxt]));
  const calls: string[] = [];
  const resolver = async (name: string, rrtype: string): Promise<string[][]> => {
    calls.push(`${rrtype} ${name}`);
    const value = rrtype === "TXT" ? txt.get(name.toLowerCase()) : undefined;
    if (value !== undefined) return [[value]];
    throw Object.assign(new Error(`no ${rrtype} for ${name}`), { code: "ENOTFOUND" });
  };
  return Object.assign(resolver, { calls });
}

/** A receiver's state kept in maps, for tests of the checks alone. */
export function memoryState(
  hashes: Record<string, string> = {},
): ReceiverState & { hashes: Map<string, string> } {
  const seen = new Set<string>();
  const map = new Map(Object.entries(hashes));
  return {
    hashes: map,
    messageHash: async (id) => map.get(id),
    claimNonce: async (sender, nonce) => {
      const key = `${sender} ${nonce}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    },
  };
}

const common = (from: Party, to: Party, now: number, thread: string) => ({
  "@context": [...MESSAGE_CONTEXT],
  profile: "agent-intents/1",
  id: newId(),
  thread,
  from: { party: from.party, address: from.address, name: `${from.org} agent` },
  to: { address: to.address },
  nonce: newNonce(),
  iat: now,
  acting_for: { org_name: from.org, contact: `owner@${from.domain}` },
  agent: { name: `${from.domain} agent`, kind: "api" },
});

export function askQuote(from: Party, to: Party, now: number): AskQuote {
  return {
    ...common(from, to, now, newId()),
    type: "ask_quote",
    exp: now + 86_400,
    items: [{ description: "Oak desk, 160 cm", quantity: 4 }],
  } as unknown as AskQuote;
}

export function quote(
  from: Party,
  to: Party,
  now: number,
  answering: { message: Message; hash: string },
): Quote {
  return {
    ...common(from, to, now, answering.message.thread),
    type: "quote",
    in_reply_to: answering.message.id,
    prev: answering.hash,
    exp: now + 3_600,
    items: [
      { description: "Oak desk, 160 cm", quantity: 4, unit_price: { amount: "45000", currency: "EUR" } },
    ],
    total: { amount: "180000", currency: "EUR" },
    delivery_by: "2027-02-01",
  } as unknown as Quote;
}

export function accept(
  from: Party,
  to: Party,
  now: number,
  offer: { message: Message; hash: string },
): Accept {
  return {
    ...common(from, to, now, offer.message.thread),
    type: "accept",
    in_reply_to: offer.message.id,
    ref: offer.message.id,
    prev: offer.hash,
    exp: now + 3_600,
  } as unknown as Accept;
}
