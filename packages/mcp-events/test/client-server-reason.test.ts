// The server's reason for a refusal reaches the app: this package's own server, in both eras and
// both dialects, refuses an anonymous webhook subscription (Unauthorized, or SEP-3415's Forbidden,
// with `data.reason`) and an event type's authorizer refuses poll and push with a message of its
// own. Real HTTP on loopback; the client's error keeps the server's message and data.
import { developmentPolicy } from "@doorbell/webhooks";
import { afterEach, describe, expect, it } from "vitest";
import { EventsClient } from "../src/client/index.js";
import { EventsError } from "../src/protocol/index.js";
import {
  connectHttp,
  type HttpEventsServer,
  startHttpEventsServer,
  startReceiverServer,
} from "./client-harness.js";

const GUARDED = "vault.opened";
const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close().catch(() => undefined);
});

async function setup(era: "legacy" | "modern", dialect: "sketch" | "sep-3415") {
  const server: HttpEventsServer = await startHttpEventsServer(
    (events) =>
      events.event({
        name: GUARDED,
        description: "Only for the vault's owner",
        authorize: (_ctx, params) => {
          if (params.owner === "me") return true;
          throw new EventsError(
            "Unauthorized",
            { reason: "not_the_owner" },
            "Only the vault's owner may follow it",
          );
        },
        check: () => ({ events: [], cursor: "0" }),
      }),
    { webhook: { policy: developmentPolicy(), allowAnonymous: false } },
    0,
    era,
  );
  open.push(() => server.close());
  const receiver = await startReceiverServer();
  open.push(() => receiver.close());
  const events = new EventsClient({
    connect: () => connectHttp(server.url),
    dialect,
    webhook: { url: receiver.url },
  });
  open.push(() => events.close());
  receiver.mount(events);
  return events;
}

describe.each([
  ["legacy", "sketch"],
  ["legacy", "sep-3415"],
  ["modern", "sketch"],
  ["modern", "sep-3415"],
] as const)("%s era, %s dialect", (era, dialect) => {
  it("an anonymous webhook subscription is refused with the server's reason", async () => {
    const events = await setup(era, dialect);
    const error = await events
      .subscribe(GUARDED, { owner: "me" }, { delivery: "webhook" })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: "ERR_EVENTS_UNAUTHORIZED",
      serverCode: -32012,
      serverData: { reason: "Webhook subscriptions need an authenticated principal" },
      message: expect.stringContaining('(reason: "Webhook subscriptions need an authenticated principal")'),
    });
  });

  it.each(["poll", "push"] as const)(
    "%s refused by the event's authorizer keeps its message and data",
    async (mode) => {
      const events = await setup(era, dialect);
      const error = await events
        .subscribe(GUARDED, { owner: "you" }, { delivery: mode })
        .catch((e: unknown) => e);
      expect(error).toMatchObject({
        code: "ERR_EVENTS_UNAUTHORIZED",
        serverMessage: "Only the vault's owner may follow it",
        serverData: { reason: "not_the_owner" },
        message: expect.stringContaining(
          ': "Only the vault\'s owner may follow it" (reason: "not_the_owner")',
        ),
      });
    },
  );
});
