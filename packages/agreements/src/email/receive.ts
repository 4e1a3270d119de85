import { checkReceivedMessage, type ReceiverState, type ReceiverVerdict } from "../inbox/receiver-checks.js";
import type { KeyResolver } from "../jws/resolver.js";
import { authenticateMail, type MailAuthOptions, type MailAuthResult } from "./authenticate.js";
import { type ParsedAgreementMail, parseAgreementMail } from "./parse.js";

/**
 * An incoming mail through every receiver check: parse, DKIM aligned with From, then the
 * message checks. The mail itself is always returned: whatever the verdict, it stays a normal
 * e-mail a person can read.
 */

export interface ReceiveMailOptions {
  /** The receiving inbox's address. */
  readonly inbox: string;
  readonly state: ReceiverState;
  readonly resolveKey: KeyResolver;
  /** Unix seconds. */
  readonly now: number;
  readonly mailAuth?: MailAuthOptions;
}

export interface ReceivedMail {
  readonly raw: Buffer;
  readonly mail: ParsedAgreementMail;
  readonly auth: MailAuthResult;
  readonly verdict: ReceiverVerdict;
}

export async function receiveAgreementMail(raw: Buffer, options: ReceiveMailOptions): Promise<ReceivedMail> {
  const mail = await parseAgreementMail(raw);
  const auth = await authenticateMail(raw, mail.from, options.mailAuth);
  let part: { text: Uint8Array } | undefined;
  if (mail.machinePart !== undefined) part = { text: mail.machinePart };
  const verdict =
    mail.machinePartCount > 1
      ? ({
          result: "could_not_check",
          reason: "the mail has more than one machine-readable part",
          code: "ERR_AMBIGUOUS_MAIL",
          refused: false,
          warnings: [],
        } satisfies ReceiverVerdict)
      : await checkReceivedMessage({
          transport: {
            kind: "email",
            authenticatedFrom: auth.authenticatedFrom,
            ...(auth.failure === undefined ? {} : { failure: auth.failure }),
          },
          inbox: options.inbox,
          part,
          jws: mail.jws,
          state: options.state,
          resolveKey: options.resolveKey,
          now: options.now,
        });
  return { raw, mail, auth, verdict };
}
