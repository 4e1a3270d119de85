/**
 * The holder's services on an engine's database without the MCP layer: a fake clock, the local
 * mailbox, and (with `push`) the real delivery engine ringing a real endpoint on loopback. For
 * tests of the domain, offers, matching and push code that need the services wired together.
 */

import { createDeliveryEngine, type DeliveryEngine, type DeliveryEngineOptions } from "@doorbell/delivery";
import type { EngineFixture } from "@doorbell/store/testing";
import { developmentPolicy } from "@doorbell/webhooks";
import { createHolderServices, type HolderServices } from "../../src/app/services.js";
import type { Mailer } from "../../src/mail/mailer.js";
import type { CatalogueOfferInput } from "../../src/model/services.js";
import type { PublishInput } from "../../src/model/types.js";
import { coalescedMatchesDoorbell } from "../../src/push/coalesced-doorbell.js";
import { createTestHolderContext, fakeClock, type TestHolderContext } from "../../src/testing.js";

export interface ServicesHolder {
  ctx: TestHolderContext;
  clock: ReturnType<typeof fakeClock>;
  services: HolderServices;
  delivery?: DeliveryEngine;
  runDue(): Promise<unknown>;
}

export async function startServices(
  engine: EngineFixture,
  options: {
    push?: Partial<DeliveryEngineOptions> | true;
    /** The services' mailer, made around the local mailbox (which keeps every mail for reading). */
    mailer?: (mailbox: TestHolderContext["mailbox"]) => Mailer;
  } = {},
): Promise<ServicesHolder> {
  const clock = fakeClock();
  const ctx = await createTestHolderContext(engine.db, clock.now, { reset: true });
  const delivery =
    options.push === undefined
      ? undefined
      : createDeliveryEngine({
          store: engine.db as unknown as DeliveryEngineOptions["store"],
          sealer: ctx.sealer,
          policy: developmentPolicy(),
          clock: clock.now,
          coalesce: coalescedMatchesDoorbell,
          ...(options.push === true ? {} : options.push),
        });
  const services = createHolderServices(
    options.mailer === undefined ? ctx : { ...ctx, mailer: options.mailer(ctx.mailbox) },
    delivery === undefined ? {} : { push: { engine: delivery } },
  );
  await services.matching.start();
  return {
    ctx,
    clock,
    services,
    ...(delivery === undefined ? {} : { delivery }),
    runDue: async () => delivery?.runDue(),
  };
}

export const octaviaWanted = (more: Partial<PublishInput> = {}): PublishInput =>
  ({
    statement: "A Škoda Octavia combi, diesel, near Bratislava",
    criteria: { category: "vehicles", make: "Škoda", model: "Octavia" },
    area: { country: "SK", region: "SK-BL" },
    budget: { amount: 15_000, currency: "EUR" },
    ...more,
  }) as PublishInput;

export interface Confirmed {
  intentId: string;
  intentCode: string;
  manageToken: string;
}

/** Publishes a draft; `confirm` gives consent and clicks the double opt-in link, as the person would. */
export async function publishDraft(h: ServicesHolder, input: PublishInput = octaviaWanted()) {
  const published = await h.services.intents.publish(input);
  return {
    intentId: published.intent.id,
    intentCode: published.intentCode,
    consentUrl: published.consentUrl,
  };
}

export async function confirm(
  h: ServicesHolder,
  draft: { intentId: string; intentCode: string; consentUrl: string },
  email: string,
): Promise<Confirmed> {
  const token = draft.consentUrl.slice(draft.consentUrl.lastIndexOf("/") + 1);
  await h.services.consent.giveConsent(token, { email, accepted: true });
  const [mail] = await h.ctx.mailbox.listMailbox({ to: email, limit: 1 });
  const confirmToken = mail === undefined ? undefined : /\/confirm\/([0-9A-Za-z]+)/.exec(mail.text)?.[1];
  const manageToken = mail === undefined ? undefined : /\/manage\/([0-9A-Za-z]+)/.exec(mail.text)?.[1];
  if (confirmToken === undefined || manageToken === undefined) throw new Error("no confirmation mail");
  await h.services.consent.confirmEmail(confirmToken);
  return { intentId: draft.intentId, intentCode: draft.intentCode, manageToken };
}

export async function activeIntent(
  h: ServicesHolder,
  email: string,
  input?: PublishInput,
): Promise<Confirmed> {
  return confirm(h, await publishDraft(h, input), email);
}

/** Mails to `to`, newest first. */
export const mailsTo = (h: ServicesHolder, to: string) => h.ctx.mailbox.listMailbox({ to, limit: 100 });

export type { CatalogueOfferInput };
