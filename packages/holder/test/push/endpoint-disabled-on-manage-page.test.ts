// The person's manage page says when their assistant's endpoint was disabled: a subscription the
// person allowed, whose endpoint refuses every doorbell until push profile §6 rule 5 ends it, is
// listed as stopped because the endpoint stopped answering, with the date its notifications were
// switched off, in the person's language.
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  basicPublish,
  HOUR,
  octavia,
  ok,
  type Published,
  startHolder,
  type TestHolder,
} from "../support/mcp-harness.js";
import { FormClient, hiddenField } from "../support/pages-harness.js";
import { type AgentEndpoint, startAgentEndpoint } from "../support/push-endpoint.js";

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: TestHolder;
  let endpoint: AgentEndpoint;
  const runDue = () => (h.delivery as NonNullable<TestHolder["delivery"]>).runDue();

  beforeAll(async () => {
    h = await startHolder(engine, { push: true });
    endpoint = await startAgentEndpoint(h.clock.now);
  });
  afterAll(async () => {
    await h.close();
    await endpoint.close();
  });

  it("shows the date the assistant's endpoint was switched off after failing every doorbell, in the person's language", async () => {
    const agent = await h.connect();
    const draft = await ok<Published>(agent, "intent_publish_intent", basicPublish());
    const sub = await ok<{ subscriptionId: string }>(agent, "intent_subscribe_events", {
      intentCode: draft.intentCode,
      delivery: { url: `${endpoint.url}/failing`, secret: endpoint.secret },
    });
    await runDue();
    const person = new FormClient(h.origin);
    const email = "disabled@example.sk";
    const consentPage = await person.get(new URL(draft.consentUrl).pathname);
    await person.post(new URL(draft.consentUrl).pathname, {
      csrf: hiddenField(consentPage.html, "csrf") ?? "",
      consentVersion: hiddenField(consentPage.html, "consentVersion") ?? "",
      email,
      consent: "yes",
      [`notify_${sub.subscriptionId}`]: "yes",
    });
    const [mail] = await h.ctx.mailbox.listMailbox({ to: email, limit: 1 });
    const confirmPath = /\/confirm\/[0-9A-Za-z]+/.exec(mail?.text ?? "")?.[0] ?? "";
    const manageUrl = /\/manage\/[0-9A-Za-z]+/.exec(mail?.text ?? "")?.[0] ?? "";
    const confirmPage = await person.get(confirmPath);
    await person.post(confirmPath, { csrf: hiddenField(confirmPage.html, "csrf") ?? "" });
    await runDue();
    const principal = { kind: "intent-code" as const, intentId: draft.intent.id };
    expect((await h.services.push?.view(principal, sub.subscriptionId))?.status).toBe("active");
    const before = await person.get(manageUrl);
    expect(before.html).not.toContain("switched its notifications off");

    // From now on the endpoint refuses everything; a match rings, and rule 5's retries run out.
    endpoint.control.status = 500;
    await h.services.offers.importCatalogue([octavia()]);
    await runDue();
    for (let hour = 0; hour < 30; hour++) {
      if ((await h.services.push?.view(principal, sub.subscriptionId))?.status === "ended") break;
      h.clock.advance(HOUR);
      await runDue();
    }
    expect(await h.services.push?.view(principal, sub.subscriptionId)).toMatchObject({
      status: "ended",
      endedReason: "delivery-failed",
    });

    const page = await person.get(manageUrl);
    expect(page.html).toContain("stopped (the assistant&#39;s endpoint stopped answering)");
    expect(page.html).toMatch(
      /Its endpoint failed every attempt for too long, so we switched its notifications off on <time datetime="[^"]+">[^<]+<\/time>\. The assistant can ask for them again\./,
    );
    const slovak = await person.request(manageUrl, { headers: { "accept-language": "sk" } });
    expect(slovak.html).toMatch(/preto sme mu ich vypli <time datetime="[^"]+">/);
    const czech = await person.request(manageUrl, { headers: { "accept-language": "cs" } });
    expect(czech.html).toMatch(/proto jsme mu je vypnuli <time datetime="[^"]+">/);
  });
});
