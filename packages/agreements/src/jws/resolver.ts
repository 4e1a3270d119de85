import type { PublicJwk } from "./keys.js";

/** What a verifier asks the trust rule: which key signed, for whom, and when. */
export interface KeyRequest {
  /** The key page address from the protected header. */
  readonly jku: string;
  readonly kid: string;
  /** The sender the signed document names: the key page's party must list this address or its domain. */
  readonly signer: { readonly address: string; readonly party?: string };
  /** When the signature was made (Unix seconds): revocation and retirement are judged against it. */
  readonly issuedAt: number;
}

/** Who vouched for a key: a trusted origin's page, or only the pages handed to the checker. */
export type KeysFrom = "trusted_origin" | "as_supplied";

export interface TrustedKey {
  readonly jwk: PublicJwk;
  readonly kid: string;
  readonly party: string;
  /** How the sender was tied to the party: listed address, listed domain, or DNS TXT. */
  readonly vouchedBy: "address" | "domain" | "dns";
  /**
   * Where the key page came from: fetched from an origin the checker trusts, or as supplied by
   * whoever asked for the check (files, a pasted page), which only shows the record matches them.
   */
  readonly keysFrom: KeysFrom;
  /** Plain words, e.g. a key revoked after the signature was made. */
  readonly warnings: readonly string[];
}

/**
 * The trust rule as a function (see `createKeyResolver`): resolves a key or throws an
 * AgreementError saying why it is not trusted. Never reads a key from the message body.
 */
export type KeyResolver = (request: KeyRequest) => Promise<TrustedKey>;
