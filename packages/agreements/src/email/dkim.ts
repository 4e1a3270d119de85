import { createPublicKey, type KeyObject } from "node:crypto";
import { CodedError } from "@doorbell/errors";
import { dkimSign } from "mailauth";
import { DKIM_SIGNED_HEADERS } from "./headers.js";

/** A DKIM signing key for one domain and selector (RFC 6376; Ed25519 per RFC 8463, or RSA). */
export interface DkimKey {
  readonly domain: string;
  readonly selector: string;
  /** PKCS#8 PEM. */
  readonly privateKey: string;
  readonly algorithm: "ed25519-sha256" | "rsa-sha256";
}

export class DkimSignError extends CodedError<"ERR_DKIM_SIGN"> {
  override readonly name = "DkimSignError";
  constructor(message: string) {
    super("ERR_DKIM_SIGN", message);
  }
}

/**
 * Signs a composed message with mailauth's `dkimSign` (relaxed/relaxed), covering the agent
 * attribution header fields, and returns the message with the DKIM-Signature prepended.
 */
export async function dkimSignMail(raw: Buffer, key: DkimKey, signTime?: Date): Promise<Buffer> {
  const result = await dkimSign(raw, {
    canonicalization: "relaxed/relaxed",
    signingDomain: key.domain,
    selector: key.selector,
    privateKey: key.privateKey,
    // mailauth reads the field names as one colon-separated string (its typings say string[];
    // an array is silently replaced by its default list, which lacks the attribution headers).
    headerList: DKIM_SIGNED_HEADERS.join(":") as unknown as string[],
    signatureData: [
      {
        signingDomain: key.domain,
        selector: key.selector,
        privateKey: key.privateKey,
        algorithm: key.algorithm,
      },
    ],
    ...(signTime === undefined ? {} : { signTime }),
  });
  if (result.errors.length > 0 || result.signatures.length === 0) {
    throw new DkimSignError(
      `DKIM signing for ${key.domain} failed: ${result.errors[0]?.message ?? "no signature"}`,
    );
  }
  const signatures = result.signatures.endsWith("\r\n") ? result.signatures : `${result.signatures}\r\n`;
  return Buffer.concat([Buffer.from(signatures), raw]);
}

/**
 * The TXT value to publish at `<selector>._domainkey.<domain>`: for Ed25519 the raw 32-byte public
 * key (RFC 8463 §4.2), for RSA the DER SubjectPublicKeyInfo, both base64.
 */
export function dkimTxtRecord(publicKey: string | KeyObject): string {
  const key = typeof publicKey === "string" ? createPublicKey(publicKey) : publicKey;
  if (key.asymmetricKeyType === "ed25519") {
    const x = key.export({ format: "jwk" }).x ?? "";
    return `v=DKIM1; k=ed25519; p=${Buffer.from(x, "base64url").toString("base64")}`;
  }
  if (key.asymmetricKeyType === "rsa") {
    return `v=DKIM1; k=rsa; p=${key.export({ format: "der", type: "spki" }).toString("base64")}`;
  }
  throw new DkimSignError(`a ${key.asymmetricKeyType} key cannot sign DKIM`);
}
