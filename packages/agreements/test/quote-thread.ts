/**
 * What the end-to-end agreement tests over A2A and over e-mail share: the seller and the buyer,
 * the agents they start (closed after each test), and the responders of a desk-quote thread.
 */
import { afterEach } from "vitest";
import type { Responder } from "../src/inbox/agent-inbox.js";
import type { KeyResolver } from "../src/jws/resolver.js";
import { makeParties, type Party, resolverFor } from "./inbox-parties.js";

export const ASK = { type: "ask_quote" as const, items: [{ description: "Oak desk, 160 cm", quantity: 4 }] };

/** The seller and the buyer, with a key resolver that trusts both their pages. */
export async function twoParties(): Promise<{ seller: Party; buyer: Party; resolveKey: KeyResolver }> {
  const { seller, buyer } = await makeParties();
  return { seller, buyer, resolveKey: await resolverFor(seller, buyer) };
}

/** Registers the afterEach that closes every agent a test put in `running`; returns `running`. */
export function closedAfterEach<A extends { close(): Promise<void> }>(running: A[] = []): A[] {
  afterEach(async () => {
    while (running.length > 0) await running.pop()?.close();
  });
  return running;
}

/** A seller that quotes four desks at `amountEach` cents, open until `exp(now)` (seconds). */
export const quoteDesks =
  (amountEach: string, exp: (now: number) => number): Responder =>
  async ({ message, now }) =>
    message.type === "ask_quote"
      ? {
          type: "quote",
          items: [
            {
              description: "Oak desk, 160 cm",
              quantity: 4,
              unit_price: { amount: amountEach, currency: "EUR" },
            },
          ],
          total: { amount: String(BigInt(amountEach) * 4n), currency: "EUR" },
          delivery_by: "2027-02-01",
          exp: exp(now),
        }
      : undefined;

export const acceptQuotes: Responder = async ({ message }) =>
  message.type === "quote" ? { type: "accept", ref: message.id } : undefined;

/** The seller's cheaper quote that replaces `replaces`, open for an hour from now. */
export const counterQuote = (replaces: string | undefined) => ({
  type: "quote" as const,
  replaces,
  items: [{ description: "Oak desk, 160 cm", quantity: 4, unit_price: { amount: "44000", currency: "EUR" } }],
  total: { amount: "176000", currency: "EUR" },
  exp: Math.floor(Date.now() / 1000) + 3600,
});
