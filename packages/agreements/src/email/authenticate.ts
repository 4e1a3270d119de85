import { authenticate, type DNSResolver } from "mailauth";
import { AGENT_ATTRIBUTION_HEADER, AGENT_OF_HEADER } from "./headers.js";

/**
 * The receiving server's mail check: DKIM verified (mailauth) for a domain aligned with the one
 * From address. Alignment is mailauth's relaxed (organisational domain) alignment, made strict when
 * the domain's DMARC record says `adkim=s`. A signature with `l=` (body length limit) does not
 * count, since text could be appended after what was signed, and neither does one that leaves the
 * agent attribution header fields present in the mail unsigned.
 */

export interface MailAuthOptions {
  /** DNS resolver with the `dns.promises.resolve` contract; inject one in tests. */
  readonly resolver?: DNSResolver;
  /** The connecting client's IP, HELO name and MAIL FROM, as the SMTP session saw them. */
  readonly ip?: string;
  readonly helo?: string;
  readonly sender?: string;
  /** This receiving server's host name (for Authentication-Results). */
  readonly mta?: string;
}

export interface MailAuthResult {
  /** The From address, when DKIM passed for a domain aligned with it. */
  readonly authenticatedFrom: string | undefined;
  /** The aligned DKIM signing domain. */
  readonly signingDomain: string | undefined;
  /** Why the check failed, in plain words. */
  readonly failure: string | undefined;
  /** The receiving server's result, as `Authentication-Results` (kept with a `their_reply` record). */
  readonly authenticationResults: string;
}

function headerNames(keys: unknown): Set<string> {
  return new Set(
    String(keys ?? "")
      .split(":")
      .map((k) => k.trim().toLowerCase())
      .filter((k) => k !== ""),
  );
}

export async function authenticateMail(
  raw: Buffer,
  fromAddresses: readonly string[],
  options: MailAuthOptions = {},
): Promise<MailAuthResult> {
  const result = await authenticate(raw, {
    ...(options.resolver === undefined ? {} : { resolver: options.resolver }),
    ip: options.ip ?? "127.0.0.1",
    helo: options.helo ?? "localhost",
    ...(options.sender === undefined ? {} : { sender: options.sender }),
    mta: options.mta ?? "localhost",
    disableArc: true,
    disableBimi: true,
  });
  const authenticationResults = result.headers;
  const none = (failure: string): MailAuthResult => ({
    authenticatedFrom: undefined,
    signingDomain: undefined,
    failure,
    authenticationResults,
  });
  if (fromAddresses.length !== 1 || fromAddresses[0] === undefined) {
    return none(`the mail must have exactly one From address (it has ${fromAddresses.length})`);
  }
  const from = fromAddresses[0];
  const rawText = raw.subarray(0, Math.min(raw.length, 64 * 1024)).toString("latin1");
  const headerEnd = rawText.search(/\r?\n\r?\n/);
  const head = (headerEnd < 0 ? rawText : rawText.slice(0, headerEnd)).toLowerCase();
  const attribution = [AGENT_OF_HEADER, AGENT_ATTRIBUTION_HEADER]
    .map((h) => h.toLowerCase())
    .filter((h) => head.startsWith(`${h}:`) || head.includes(`\n${h}:`));
  const reasons: string[] = [];
  for (const signature of result.dkim.results) {
    const status = signature.status as { result: string; aligned?: string | boolean; comment?: string };
    const details = signature as unknown as {
      canonBodyLengthLimited?: boolean;
      signingHeaders?: { keys?: string };
    };
    if (status.result !== "pass") {
      reasons.push(`DKIM ${status.result}${status.comment ? ` (${status.comment})` : ""}`);
      continue;
    }
    if (!status.aligned) {
      reasons.push(`DKIM passed for ${signature.signingDomain}, which is not aligned with ${from}`);
      continue;
    }
    if (details.canonBodyLengthLimited) {
      reasons.push(`the DKIM signature of ${signature.signingDomain} covers only part of the body (l=)`);
      continue;
    }
    const signed = headerNames(details.signingHeaders?.keys);
    const unsigned = attribution.filter((h) => !signed.has(h));
    if (unsigned.length > 0) {
      reasons.push(`the DKIM signature of ${signature.signingDomain} does not cover ${unsigned.join(", ")}`);
      continue;
    }
    return {
      authenticatedFrom: from,
      signingDomain: signature.signingDomain,
      failure: undefined,
      authenticationResults,
    };
  }
  return none(
    reasons.length === 0
      ? "the mail has no DKIM signature"
      : `DKIM did not pass for a domain aligned with the From address: ${reasons.join("; ")}`,
  );
}
