/**
 * The digests of one import go out a few at a time, one per kept SMTP connection, not one after
 * another: an import that matched many intents waits for the slowest few mails, not the sum of all
 * (the soak's importer spent its time here). Every person still gets exactly one digest.
 */
import { setTimeout as delay } from "node:timers/promises";
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SMTP_CONNECTIONS } from "../../src/mail/smtp.js";
import { activeIntent, mailsTo, startServices } from "../support/services-harness.js";

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it("sends the digests of one import at most SMTP_CONNECTIONS at once, each person once", async () => {
    let inFlight = 0;
    let most = 0;
    const h = await startServices(engine, {
      // A mail server that takes a while per message, as a remote one does.
      mailer: (mailbox) => ({
        kind: "smtp",
        async send(message) {
          inFlight++;
          most = Math.max(most, inFlight);
          try {
            await delay(25);
            await mailbox.send(message);
          } finally {
            inFlight--;
          }
        },
      }),
    });
    const people = Array.from({ length: 10 }, (_, i) => `digest${i}@example.sk`);
    for (const email of people) await activeIntent(h, email);
    most = 0;

    const result = await h.services.offers.importCatalogue([
      {
        source: { kind: "catalogue", ref: "AT-ONCE-1", seller: "Auto Bratislava" },
        title: "Škoda Octavia Combi 2.0 TDI",
        category: "vehicles",
        price: { amount: 12_000, currency: "EUR" },
        location: { country: "SK", region: "SK-BL" },
        attributes: { make: "Škoda", model: "Octavia" },
      },
    ]);
    expect(result.matched).toBe(10);
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(SMTP_CONNECTIONS);
    for (const email of people) {
      const digests = (await mailsTo(h, email)).filter(
        (mail) => mail.subject === "A new offer for your intent",
      );
      expect(digests).toHaveLength(1);
    }
  });
});
