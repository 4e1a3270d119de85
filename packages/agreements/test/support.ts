import { readFileSync } from "node:fs";
import {
  importSigningKey,
  MESSAGE_CONTEXT,
  type Message,
  type PrivateJwk,
  type SigningKey,
} from "../src/index.js";

/** Shared fixtures for the core tests: the checked-in TEST keys and two parties that trade. */
export const vectorsDir = new URL("../vectors/", import.meta.url);

export const readVector = <T = unknown>(path: string): T =>
  JSON.parse(readFileSync(new URL(path, vectorsDir), "utf8")) as T;

export type TestKeyName = "seller" | "buyer" | "seller-retired" | "seller-revoked" | "stranger";

export const testPrivateJwk = (name: TestKeyName): PrivateJwk =>
  readVector<{ jwk: PrivateJwk }>(`keys/${name}.test-key.json`).jwk;

export const testKey = (name: TestKeyName): Promise<SigningKey> => importSigningKey(testPrivateJwk(name));

export const SELLER = {
  party: "pty_seller00000000000001",
  address: "sales@seller.example",
  org: "Seller s.r.o.",
};
export const BUYER = { party: "pty_buyer000000000000002", address: "agent@buyer.example", org: "Buyer a.s." };
export const TRUSTED = "https://api.stackshift.cloud";
export const jkuOf = (party: string, origin = TRUSTED): string =>
  `${origin}/.well-known/agent-agreements/${party}.json`;

/** 2026-01-01T00:00:00Z */
export const T0 = 1_767_225_600;

const ids = {
  thread: "6f1d2a4e-8c3b-4f5a-9e7d-0a1b2c3d4e5f",
  ask: "0c8a4d7e-1f2b-4c3d-8e9f-a0b1c2d3e4f5",
  quote: "3b7e9c1a-5d2f-4e8b-a6c4-d0e1f2a3b4c5",
  accept: "9a2c4e6f-8b1d-4f3a-b5c7-e9d0f1a2b3c4",
};
export const IDS = ids;

const common = (from: typeof SELLER, to: typeof BUYER, iat: number) => ({
  "@context": [...MESSAGE_CONTEXT],
  profile: "agent-intents/1",
  thread: ids.thread,
  from: { party: from.party, address: from.address, name: `${from.org} agent` },
  to: { address: to.address },
  nonce: "AAECAwQFBgcICQoLDA0ODw",
  iat,
  exp: iat + 7 * 86_400,
  acting_for: { org_name: from.org, contact: `owner@${from.address.split("@")[1]}` },
  agent: { name: "Doorbell test agent", kind: "api" },
});

export const askQuote = (overrides: Record<string, unknown> = {}): Message =>
  ({
    ...common(BUYER, SELLER, T0),
    id: ids.ask,
    type: "ask_quote",
    items: [{ description: "Oak desk, 160 × 80 cm", quantity: 2, unit: "piece" }],
    wanted_by: "2026-02-15",
    ...overrides,
  }) as unknown as Message;

export const quote = (overrides: Record<string, unknown> = {}): Message =>
  ({
    ...common(SELLER, BUYER, T0 + 3600),
    id: ids.quote,
    type: "quote",
    nonce: "EBESExQVFhcYGRobHB0eHw",
    items: [
      {
        description: "Oak desk, 160 × 80 cm",
        quantity: 2,
        unit: "piece",
        unit_price: { amount: "45000", currency: "EUR" },
      },
    ],
    total: { amount: "90000", currency: "EUR" },
    delivery_by: "2026-02-10",
    ...overrides,
  }) as unknown as Message;

export const accept = (offerHash: string, overrides: Record<string, unknown> = {}): Message =>
  ({
    ...common(BUYER, SELLER, T0 + 7200),
    id: ids.accept,
    type: "accept",
    nonce: "ICEiIyQlJicoKSorLC0uLw",
    in_reply_to: ids.quote,
    ref: ids.quote,
    prev: offerHash,
    authority: { decided_by: "limits", limits_version: "3" },
    ...overrides,
  }) as unknown as Message;
