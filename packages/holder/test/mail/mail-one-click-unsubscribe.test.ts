// Issue #16 item 17 (push profile §6 rule 3, "one action from every e-mail about the intent"):
// every mail about an intent carries RFC 8058 one-click List-Unsubscribe / List-Unsubscribe-Post
// (also on the wire through SMTP), and a POST of List-Unsubscribe=One-Click to it stops the
// intent's notifications at once; a GET (a link scanner) changes nothing. Both engines.
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { forEachEngine } from "@doorbell/store/testing";
import type { Client } from "@modelcontextprotocol/client";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSmtpMailer } from "../../src/mail/smtp.js";
import {
  confirmationMail,
  matchDigestMail,
  notificationApprovalMail,
  withdrawnMail,
} from "../../src/mail/templates.js";
import { activeIntent, ok, startHolder, type TestHolder } from "../support/mcp-harness.js";
import { FormClient, hiddenField } from "../support/pages-harness.js";
import { type AgentEndpoint, startAgentEndpoint } from "../support/push-endpoint.js";

const MANAGE = "https://intents.example.sk/manage/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
const common = { holderName: "Test holder", statement: "A flat in Nitra", manageUrl: MANAGE };
const EXPECTED = {
  "List-Unsubscribe": `<${MANAGE}/unsubscribe>`,
  "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
};

describe("the headers of every mail about an intent", () => {
  it.each([
    [
      "confirmation",
      () =>
        confirmationMail({
          ...common,
          confirmUrl: "https://intents.example.sk/confirm/x",
          confirmExpiresAt: "2026-12-03T10:00:00.000Z",
          hasHiddenLimit: false,
        }),
    ],
    ["digest", () => matchDigestMail({ ...common, matches: [], more: 2 })],
    ["withdrawn", () => withdrawnMail({ ...common, withdrawnAt: "2026-12-01T10:00:00.000Z" })],
    [
      "approval",
      () =>
        notificationApprovalMail({
          ...common,
          deliveryHost: "agent.example.org",
          approveUrl: "https://intents.example.sk/notifications/y",
        }),
    ],
  ])("%s carries one-click List-Unsubscribe", (_kind, make) => {
    expect(make().headers).toEqual(EXPECTED);
  });

  it("go out on the wire through SMTP", async () => {
    const raws: string[] = [];
    const server = new SMTPServer({
      disabledCommands: ["STARTTLS", "AUTH"],
      logger: false,
      onData(stream, _session, callback) {
        let raw = "";
        stream.on("data", (chunk: Buffer) => {
          raw += chunk.toString();
        });
        stream.on("end", () => {
          raws.push(raw);
          callback();
        });
      },
    });
    server.listen(0, "127.0.0.1");
    await once(server.server, "listening");
    const { port } = server.server.address() as AddressInfo;
    const mailer = createSmtpMailer({ url: `smtp://127.0.0.1:${port}`, from: "holder@example.sk" });
    try {
      await mailer.send({
        to: "person@example.sk",
        ...withdrawnMail({ ...common, withdrawnAt: "2026-12-01T10:00:00.000Z" }),
      });
      // RFC 5322 §2.2.3: a long field is folded on the wire; unfolding removes the line breaks.
      const raw = (raws[0] ?? "").replace(/\r?\n(?=[ \t])/g, "");
      expect(raw).toMatch(
        new RegExp(`^List-Unsubscribe: <${MANAGE.replace(/[./]/g, "\\$&")}/unsubscribe>\\r?$`, "m"),
      );
      expect(raw).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click\r?$/m);
    } finally {
      mailer.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: TestHolder;
  let agent: Client;
  let endpoint: AgentEndpoint;
  const runDue = () => (h.delivery as NonNullable<TestHolder["delivery"]>).runDue();

  beforeAll(async () => {
    h = await startHolder(engine, { push: true });
    endpoint = await startAgentEndpoint(h.clock.now);
    agent = await h.connect();
  });
  afterAll(async () => {
    await h?.close();
    await endpoint?.close();
  });

  it("stops the intent's notifications with one POST from the mail client, never with a GET", async () => {
    const email = "one.click@example.sk";
    const published = await activeIntent(h, agent, email);
    const subscribed = await ok<{ subscriptionId: string }>(agent, "intent_subscribe_events", {
      intentCode: published.intentCode,
      delivery: { url: `${endpoint.url}/one-click`, secret: endpoint.secret },
    });
    await runDue();
    const [approvalMail] = await h.ctx.mailbox.listMailbox({ to: email, limit: 1 });
    expect(approvalMail?.subject).toBe("Allow an assistant to be notified about your intent?");
    const approvePath = new URL(
      /https?:\/\/\S+\/notifications\/[A-Za-z0-9_-]+/.exec(approvalMail?.text ?? "")?.[0] ?? "",
    ).pathname;
    const manageUrl = /https?:\/\/\S+\/manage\/[A-Za-z0-9_-]+/.exec(approvalMail?.text ?? "")?.[0] ?? "";
    const person = new FormClient(h.origin);
    const approvalPage = await person.get(approvePath);
    const allowed = await person.post(`${approvePath}/allow`, {
      csrf: hiddenField(approvalPage.html, "csrf") ?? "",
    });
    expect([200, 303]).toContain(allowed.status);
    await runDue();
    const live = await h.services.push?.receipts(published.intent.id);
    expect(live?.find((r) => r.id === subscribed.subscriptionId)?.status).toBe("active");

    // A link scanner's GET shows a button and stops nothing.
    const unsubscribe = `${new URL(manageUrl).pathname}/unsubscribe`;
    const scanned = await new FormClient(h.origin).get(unsubscribe);
    expect(scanned.status).toBe(200);
    expect(scanned.html).toContain('<form method="post">');
    // A POST without the one-click body is not one.
    const wrong = await fetch(new URL(unsubscribe, h.origin), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "something=else",
    });
    expect(wrong.status).toBe(400);
    expect(
      (await h.services.push?.receipts(published.intent.id))?.find((r) => r.id === subscribed.subscriptionId)
        ?.status,
    ).toBe("active");

    // The mail client's RFC 8058 POST: no cookie, no form token, just the body.
    const clicked = await fetch(new URL(unsubscribe, h.origin), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "List-Unsubscribe=One-Click",
    });
    expect(clicked.status).toBe(200);
    expect(await clicked.text()).toContain("Notifications stopped");
    await runDue();
    expect(endpoint.of("subscription.ended").map((doorbell) => doorbell.data)).toContainEqual({
      subscriptionId: subscribed.subscriptionId,
      reason: "approval-withdrawn",
    });
    // The intent itself stays.
    const intentId = published.intent.id;
    expect((await h.services.intents.get({ kind: "intent-code", intentId }, intentId)).status).toBe("active");
  });

  it("answers an unknown token with 404 and changes nothing", async () => {
    const answer = await fetch(`${h.origin}/manage/${"B".repeat(43)}/unsubscribe`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "List-Unsubscribe=One-Click",
    });
    expect(answer.status).toBe(404);
  });
});
