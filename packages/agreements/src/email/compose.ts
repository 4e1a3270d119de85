import MimeNode from "nodemailer/lib/mime-node/index.js";
import { canonicalJson } from "../canonical/canonicalize.js";
import type { Message } from "../message/types.js";
import {
  AGENT_ATTRIBUTION_HEADER,
  AGENT_OF_HEADER,
  agentAttributionValue,
  agentOfValue,
  messageIdFor,
} from "./headers.js";
import { renderHtml, renderMessage, renderText } from "./render.js";

/**
 * One agreement message as a normal e-mail (agent-intents/1 "How messages sit in email"):
 *
 *   multipart/mixed
 *     multipart/alternative
 *       text/plain                 rendered from the message
 *       application/ld+json        the canonical message, Content-Purpose: Machine-readable, inline
 *       text/html                  rendered from the message (last: what a mail client shows)
 *     application/jose             the compact JWS, when signed
 *     application/json             the agreement record, on the closing message only
 *
 * The machine part carries the canonical (RFC 8785) bytes, so a JWS payload can be compared with
 * it byte for byte. Every part is base64 or quoted-printable: one-line JSON never meets the
 * 998-octet line limit.
 */

export const MACHINE_PART_TYPE = "application/ld+json";
export const JWS_PART_TYPE = "application/jose";
export const RECORD_PART_TYPE = "application/json";
export const JWS_FILENAME = "message.jws";
export const RECORD_FILENAME = "agreement-record.json";

export interface ComposeMailInput {
  /** The message as validated (its canonical form goes in the machine part). */
  readonly message: Message;
  /** The compact JWS over the canonical message. Unsigned messages are allowed ("mail checks only"). */
  readonly jws?: string;
  /** The agreement record, attached to the message that closes the thread. */
  readonly record?: unknown;
  /** Overrides the rendered subject. */
  readonly subject?: string;
  readonly date?: Date;
}

/** A header value nodemailer writes as is (already ASCII and encoded), instead of RFC 2047-encoding it whole. */
function prepared(value: string): string {
  return { prepared: true, foldLines: false, value } as unknown as string;
}

function textNode(parent: MimeNode, type: string, content: string): MimeNode {
  return parent.createChild(`${type}; charset=utf-8`).setContent(content);
}

/** The unsigned RFC 5322 message (DKIM-sign it with {@link dkimSignMail} before sending). */
export async function composeAgreementMail(input: ComposeMailInput): Promise<Buffer> {
  const { message } = input;
  const rendered = renderMessage(message);
  const root = new MimeNode("multipart/mixed");
  root.setHeader({
    To: message.to.address,
    Subject: input.subject ?? rendered.subject,
    Date: (input.date ?? new Date(message.iat * 1000)).toUTCString().replace("GMT", "+0000"),
    "Message-ID": messageIdFor(message.id, message.from.address),
  });
  // nodemailer formats (and if needed encodes) an address object itself.
  const from = { name: message.from.name ?? "", address: message.from.address };
  root.setHeader("From", from as unknown as string);
  root.setHeader(AGENT_OF_HEADER, prepared(agentOfValue(message)));
  root.setHeader(AGENT_ATTRIBUTION_HEADER, prepared(agentAttributionValue(message)));
  if (message.in_reply_to !== undefined) {
    const parent = messageIdFor(message.in_reply_to, message.to.address);
    root.setHeader("In-Reply-To", parent);
    root.setHeader("References", parent);
  }
  const alternative = root.createChild("multipart/alternative");
  textNode(alternative, "text/plain", renderText(message));
  alternative
    .createChild(`${MACHINE_PART_TYPE}; charset=utf-8`)
    .setHeader({
      "Content-Purpose": "Machine-readable",
      "Content-Disposition": "inline",
      "Content-Transfer-Encoding": "base64",
    })
    .setContent(canonicalJson(message));
  textNode(alternative, "text/html", renderHtml(message));
  if (input.jws !== undefined) {
    root
      .createChild(JWS_PART_TYPE, { filename: JWS_FILENAME })
      .setHeader({
        "Content-Disposition": `attachment; filename="${JWS_FILENAME}"`,
        "Content-Transfer-Encoding": "base64",
      })
      .setContent(input.jws);
  }
  if (input.record !== undefined) {
    root
      .createChild(`${RECORD_PART_TYPE}; charset=utf-8`, { filename: RECORD_FILENAME })
      .setHeader({
        "Content-Disposition": `attachment; filename="${RECORD_FILENAME}"`,
        "Content-Transfer-Encoding": "base64",
      })
      .setContent(canonicalJson(input.record));
  }
  return root.build();
}
