/**
 * The operator page shows every subscription, but never what is sealed or private: after a flow
 * that plants canaries where the page's data comes from (a contact, a hidden limit, the
 * intentCode, the page tokens, a doorbell endpoint with a canary path and port, its secret), a
 * delivered doorbell and a failed one, the page names the subscription and its failure and holds
 * none of the canaries. A whole holder on loopback, both engines (the shapes are the metrics
 * canary test's).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { forEachEngine, type TestDatabase } from "@doorbell/store/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHolder, type Holder } from "../../src/app/holder.js";
import { isLocalMailbox } from "../../src/mail/local-mailbox.js";
import { basicIntent, tokenOf } from "../support/intents-harness.js";
import { freePort, until } from "../support/loopback.js";
import { carOffer } from "../support/offer-helpers.js";
import { type AgentEndpoint, startAgentEndpoint } from "../support/push-endpoint.js";

const CONTACT = "Canary.Operator.4417@Example.SK";
const CONTACT_SHAPES = ["canary.operator.4417", "Canary.Operator.4417", "4417@", "example.sk"];
const LIMIT = 58_261;
const LIMIT_SHAPES = ["58261", "58,261", "58 261", "58.261"];
const PATH_CANARY = "doorbell-CANARYOPERATOR3x8";

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let database: TestDatabase;
  let holder: Holder;
  let endpoint: AgentEndpoint;
  let base: string;
  let dataDir: string;

  beforeAll(async () => {
    database = await engine.createDatabase();
    dataDir = mkdtempSync(path.join(tmpdir(), "doorbell-operator-canary-"));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    holder = await createHolder({
      database: database.url,
      dataDir,
      publicUrl: base,
      env: {},
      demo: false,
      oauth: false,
      events: false,
      webhookPolicy: "development",
      // No token: a loopback holder serves it open.
      operatorPage: {},
      log: pino({ level: "silent" }),
    });
    await holder.listen(port, "127.0.0.1");
    endpoint = await startAgentEndpoint();
  });
  afterAll(async () => {
    await holder?.close();
    await endpoint?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("names the subscription and its failure, and holds no URL, secret, contact, code or token", async () => {
    const { intents, consent, offers } = holder.services;
    const push = holder.services.push as NonNullable<typeof holder.services.push>;
    const mailer = holder.context.mailer;
    if (!isLocalMailbox(mailer)) throw new Error("the test holder uses the local mailbox");

    const published = await intents.publish(basicIntent({ hiddenLimit: LIMIT }));
    const code = published.intentCode;
    const consentToken = tokenOf(published.consentUrl);
    await consent.giveConsent(consentToken, { email: CONTACT, accepted: true });
    const [confirmation] = await mailer.listMailbox({ to: CONTACT.toLowerCase(), limit: 1 });
    const confirmToken = /\/confirm\/([0-9A-Za-z]+)/.exec(confirmation?.text ?? "")?.[1] as string;
    const manageToken = /\/manage\/([0-9A-Za-z]+)/.exec(confirmation?.text ?? "")?.[1] as string;
    await consent.confirmEmail(confirmToken);

    // A doorbell endpoint with a canary in its path; the person approves it.
    const principal = await intents.principalForCode(code);
    if (principal === undefined) throw new Error("the code opens nothing");
    const url = endpoint.url.replace("/doorbell", `/${PATH_CANARY}`);
    const subscribed = await push.subscribe(principal, { delivery: { url, secret: endpoint.secret } });
    await until("the challenge", () => (endpoint.control.challenges > 0 ? true : undefined));
    const approval = await until("the approval mail", async () => {
      const mails = await mailer.listMailbox({ to: CONTACT.toLowerCase(), limit: 10 });
      const text = mails.find((m) => m.subject.startsWith("Allow an assistant"))?.text ?? "";
      return /\/notifications\/([0-9A-Za-z]+)/.exec(text)?.[1];
    });
    await push.approve(published.intent.id, subscribed.subscriptionId);

    // A match rings and is delivered; then the withdrawal's subscription.ended fails (503).
    await offers.importCatalogue([
      carOffer({ location: { country: "SK", region: "SK-BL" } }, { mileageKm: 98_000, year: 2019 }),
    ]);
    await until("the matches doorbell", () =>
      endpoint.of("intent.matches.delivered").length > 0 ? true : undefined,
    );
    endpoint.control.status = 503;
    await intents.withdraw(principal);
    // The attempt log is written as the attempt ends, the chart's counts at the page's next flush:
    // an attempt that ends while the page is being read may be in the list and not yet counted.
    const counted = /id="chart-hours-desc">[1-9]\d* delivered and [1-9]\d* failed attempts/;
    const page = await until("the failed attempt on the page and in the chart", async () => {
      const html = await (await fetch(`${base}/operator`)).text();
      return html.includes('<code class="failing">http_5xx</code>') && counted.test(html) ? html : undefined;
    });

    // It is this subscription's page: its id, its delivered doorbell in the chart.
    expect(page).toContain(subscribed.subscriptionId);
    expect(page).toContain("Push profile");

    const endpointPort = new URL(endpoint.url).port;
    const canaries = [
      ...CONTACT_SHAPES,
      ...LIMIT_SHAPES,
      code,
      code.slice(3),
      consentToken,
      confirmToken,
      manageToken,
      approval,
      PATH_CANARY,
      url,
      `:${endpointPort}`,
      endpoint.secret,
      endpoint.secret.slice(6),
    ];
    const planted = (haystack: string, canary: string): boolean =>
      /^[0-9., ]+$/.test(canary)
        ? new RegExp(`(^|[^0-9.])${canary.replace(/[.]/g, "\\.")}($|[^0-9])`).test(haystack)
        : haystack.includes(canary);
    for (const canary of canaries) expect(planted(page, canary), `the page holds ${canary}`).toBe(false);
    // The same in Slovak and Czech.
    for (const lang of ["sk", "cs"]) {
      const other = await (await fetch(`${base}/operator?lang=${lang}`)).text();
      expect(other).toContain(`<html lang="${lang}">`);
      for (const canary of canaries)
        expect(planted(other, canary), `the ${lang} page holds ${canary}`).toBe(false);
    }
  });
});
