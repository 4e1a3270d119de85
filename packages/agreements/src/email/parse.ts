import PostalMime, { type Address } from "postal-mime";
import { JWS_PART_TYPE, MACHINE_PART_TYPE, RECORD_PART_TYPE } from "./compose.js";

/**
 * Reads an incoming mail with postal-mime into what the receiver checks need. Nothing here decides
 * trust: an ambiguous mail (two From addresses, two machine parts, two signatures) is reported as
 * such, and the checks treat it as plain mail.
 */

export interface ParsedAgreementMail {
  /** The From addresses (the checks require exactly one). */
  readonly from: readonly string[];
  readonly to: readonly string[];
  readonly subject: string | undefined;
  readonly messageId: string | undefined;
  readonly inReplyTo: string | undefined;
  readonly text: string | undefined;
  readonly html: string | undefined;
  /** The bytes of the application/ld+json part, when there is exactly one. */
  readonly machinePart: Uint8Array | undefined;
  readonly machinePartCount: number;
  /** The compact JWS of the application/jose part, when there is exactly one. */
  readonly jws: string | undefined;
  /** The bytes of the application/json record part (closing message), when there is exactly one. */
  readonly record: Uint8Array | undefined;
}

function addresses(list: readonly Address[] | Address | undefined): string[] {
  if (list === undefined) return [];
  const out: string[] = [];
  for (const entry of Array.isArray(list) ? list : [list]) {
    if (entry.address !== undefined) out.push(entry.address);
    else for (const member of entry.group ?? []) out.push(member.address);
  }
  return out;
}

function bytes(content: ArrayBuffer | Uint8Array | string): Uint8Array {
  if (typeof content === "string") return new TextEncoder().encode(content);
  return content instanceof Uint8Array ? content : new Uint8Array(content);
}

export async function parseAgreementMail(raw: Buffer | Uint8Array | string): Promise<ParsedAgreementMail> {
  const email = await PostalMime.parse(raw, { attachmentEncoding: "arraybuffer", maxNestingDepth: 20 });
  const ofType = (type: string) => email.attachments.filter((a) => a.mimeType.toLowerCase() === type);
  const machine = ofType(MACHINE_PART_TYPE);
  const jws = ofType(JWS_PART_TYPE);
  const record = ofType(RECORD_PART_TYPE);
  const fromHeaders = email.headers.filter((h) => h.key === "from");
  const from =
    fromHeaders.length > 1
      ? ["(more than one From header)", ...addresses(email.from)]
      : addresses(email.from);
  return {
    from,
    to: addresses(email.to),
    subject: email.subject,
    messageId: email.messageId,
    inReplyTo: email.inReplyTo,
    text: email.text,
    html: email.html,
    machinePart: machine.length === 1 && machine[0] ? bytes(machine[0].content) : undefined,
    machinePartCount: machine.length,
    jws: jws.length === 1 && jws[0] ? new TextDecoder().decode(bytes(jws[0].content)).trim() : undefined,
    record: record.length === 1 && record[0] ? bytes(record[0].content) : undefined,
  };
}
