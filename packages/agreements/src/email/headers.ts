import mimeFuncs from "nodemailer/lib/mime-funcs/index.js";
import type { Message } from "../message/types.js";

/**
 * The agent attribution header fields (draft-chuang-agent-attribution-header-fields, named as
 * agent-intents/1 names them): `Agent-Of` is the human-readable responsible party, matching
 * `acting_for`; `Agent-Attribution` is one line of JSON with the agent and whom it acts for. They
 * say who is responsible, never that the message is trustworthy; DKIM covers both.
 */
export const AGENT_OF_HEADER = "Agent-Of";
export const AGENT_ATTRIBUTION_HEADER = "Agent-Attribution";

/** The header fields a DKIM signature of an agreement mail covers. */
export const DKIM_SIGNED_HEADERS = [
  "From",
  "To",
  "Subject",
  "Date",
  "Message-ID",
  "In-Reply-To",
  "References",
  "MIME-Version",
  "Content-Type",
  AGENT_OF_HEADER,
  AGENT_ATTRIBUTION_HEADER,
] as const;

const NON_ASCII = /[^\x20-\x7e]/;

/** A display name as a quoted string, or an RFC 2047 encoded word when it is not printable ASCII. */
export function displayName(name: string): string {
  if (NON_ASCII.test(name)) return mimeFuncs.encodeWord(name, "Q", 52);
  return `"${name.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** `"Org" <contact>`: the person responsible for the agent, as `acting_for` says. */
export function agentOfValue(message: Message): string {
  return `${displayName(message.acting_for.org_name)} <${message.acting_for.contact}>`;
}

/** One line of JSON, pure ASCII (non-ASCII characters as \\u escapes, which JSON reads back unchanged). */
export function agentAttributionValue(message: Message): string {
  const json = JSON.stringify({
    agent: { name: message.agent.name, kind: message.agent.kind },
    acting_for: { org_name: message.acting_for.org_name, contact: message.acting_for.contact },
    ...(message.from.party === undefined ? {} : { party: message.from.party }),
  });
  return json.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** `<id@domain>`: the message id as an RFC 5322 msg-id, on the sender's domain. */
export function messageIdFor(id: string, address: string): string {
  const domain = address.slice(address.lastIndexOf("@") + 1);
  return `<${id}@${domain}>`;
}

export function domainOf(address: string): string {
  return address.slice(address.lastIndexOf("@") + 1).toLowerCase();
}
