/** Checks of what an agent passes in, before anything goes to the holder; each refusal says what is wrong. */

import { PUSH_EVENTS, type PushEvent } from "@doorbell/intents";
import { decodeSecret } from "@doorbell/webhooks";
import { AgentError } from "../errors.js";

const invalid = (message: string) => new AgentError("ERR_AGENT_INVALID_ARGUMENT", message);

export function checkCode(code: unknown): string {
  if (typeof code !== "string" || code.length === 0 || code.length > 200 || /\s/.test(code)) {
    throw invalid(
      "an intentCode is the non-empty string intent_publish_intent returned (ic_…), without spaces",
    );
  }
  return code;
}

export function checkSince(since: string | undefined): string | undefined {
  if (since === undefined) return undefined;
  if (typeof since !== "string" || Number.isNaN(Date.parse(since)) || !/[zZ]|[+-]\d\d:\d\d$/.test(since)) {
    throw invalid(
      `since must be an ISO 8601 date-time with a zone (a deliveredAt), got ${JSON.stringify(since)}`,
    );
  }
  return since;
}

export function checkDeliveryUrl(url: unknown): string {
  let parsed: URL;
  try {
    parsed = new URL(String(url));
  } catch {
    throw invalid(
      `the delivery url must be an absolute URL, got ${JSON.stringify(String(url).slice(0, 100))}`,
    );
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    throw invalid(`the delivery url must be https (http only for a local holder), not ${parsed.protocol}`);
  }
  if (parsed.username !== "" || parsed.password !== "") {
    throw invalid(
      "the delivery url must not carry a user name or password (the signature is the credential)",
    );
  }
  return parsed.href;
}

export function checkSecret(secret: unknown): string {
  if (typeof secret !== "string" || !secret.startsWith("whsec_")) {
    throw invalid("the delivery secret must be whsec_ followed by base64 (see generateSecret)");
  }
  try {
    decodeSecret(secret);
  } catch (error) {
    throw invalid(`the delivery secret is not usable: ${(error as Error).message}`);
  }
  return secret;
}

export function checkEvents(events: readonly string[] | undefined): PushEvent[] | undefined {
  if (events === undefined) return undefined;
  if (!Array.isArray(events) || events.length === 0)
    throw invalid("events, when given, lists at least one event type");
  for (const event of events) {
    if (!(PUSH_EVENTS as readonly string[]).includes(event)) {
      throw invalid(
        `unknown event type ${JSON.stringify(event)}; push profile 0.4 has ${PUSH_EVENTS.join(" and ")}`,
      );
    }
  }
  return [...new Set(events)] as PushEvent[];
}

const HOST_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/i;

export function checkRelayFor(host: string | undefined): string | undefined {
  if (host === undefined) return undefined;
  if (
    typeof host !== "string" ||
    host.length === 0 ||
    host.length > 253 ||
    !host.split(".").every((label) => HOST_LABEL.test(label))
  ) {
    throw invalid(
      `relayFor is a host name of at most 253 characters (push profile §7 rule 3), got ${JSON.stringify(String(host).slice(0, 80))}`,
    );
  }
  return host.toLowerCase();
}

export function checkSubscriptionId(id: unknown): string {
  if (typeof id !== "string" || id.length === 0 || id.length > 200) {
    throw invalid("a subscriptionId is the non-empty string intent_subscribe_events returned (sub_…)");
  }
  return id;
}
