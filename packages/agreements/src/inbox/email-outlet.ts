import { composeAgreementMail } from "../email/compose.js";
import { type DkimKey, dkimSignMail } from "../email/dkim.js";
import type { Outlet } from "./outlet.js";

/**
 * The e-mail outlet of an agent inbox: each message as a normal e-mail (`composeAgreementMail`,
 * the record attached to the closing accept), DKIM-signed for the sender's domain, handed to
 * `send` (SMTP in production: `createSmtpSender`).
 */
export interface EmailOutletOptions {
  readonly dkim: DkimKey;
  readonly send: (raw: Buffer, envelope: { from: string; to: string }) => Promise<void>;
}

export function emailOutlet(options: EmailOutletOptions): Outlet {
  return {
    async deliver({ message, jws, record }) {
      const composed = await composeAgreementMail({
        message,
        jws,
        ...(record === undefined ? {} : { record }),
      });
      const raw = await dkimSignMail(composed, options.dkim);
      await options.send(raw, { from: message.from.address, to: message.to.address });
    },
  };
}
