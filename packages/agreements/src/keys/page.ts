import { parseJson } from "../canonical/parse-json.js";
import { AgreementError } from "../errors.js";
import { keyThumbprint, type PublicJwk } from "../jws/keys.js";
import { describeErrors, validatorFor } from "../schemas.js";

/** One key on a party key page, with the times that decide which signatures it checks. */
export interface PageKey extends PublicJwk {
  readonly kid: string;
  readonly alg?: "EdDSA";
  readonly use?: "sig";
  /** Unix seconds from which the key signs. */
  readonly created_at: number;
  /** From this time the key no longer signs; signatures made before still check. */
  readonly retired_at?: number;
  /** A signature made at or after this time fails; an earlier one checks, with a warning. */
  readonly revoked_at?: number;
}

/** `/.well-known/agent-agreements/{party}.json` (schemas/key-page.schema.json). */
export interface KeyPage {
  readonly party: string;
  readonly name?: string;
  /** Sender addresses the party signs for (compared case-insensitively). */
  readonly addresses: readonly string[];
  /** Sender domains the party signs for (lowercase, exact). */
  readonly domains: readonly string[];
  readonly keys: readonly PageKey[];
}

const refuse = (message: string, details: readonly string[] = []): never => {
  throw new AgreementError("ERR_KEY_PAGE_INVALID", message, details);
};

/**
 * Checks a key page: the schema, the party it was fetched for, every kid equal to its key's
 * thumbprint, no kid twice, and retirement or revocation not before creation.
 */
export const parseKeyPage = async (input: unknown, expectedParty?: string): Promise<KeyPage> => {
  const value =
    typeof input === "string" || input instanceof Uint8Array ? parseJson(input, "the key page") : input;
  const validate = validatorFor<KeyPage>("key-page");
  if (!validate(value)) {
    const problems = describeErrors(validate.errors);
    return refuse(`the key page does not validate: ${problems[0]}`, problems);
  }
  const page = value;
  if (expectedParty !== undefined && page.party !== expectedParty) {
    return refuse(`the key page at the address of ${expectedParty} is the page of ${page.party}`);
  }
  const seen = new Set<string>();
  for (const [index, key] of page.keys.entries()) {
    if (seen.has(key.kid)) refuse(`the key page lists the kid ${key.kid} twice`);
    seen.add(key.kid);
    if ((await keyThumbprint(key)) !== key.kid)
      refuse(`key ${index} on the key page has a kid that is not its thumbprint`);
    if (key.retired_at !== undefined && key.retired_at < key.created_at) {
      refuse(`key ${index} on the key page is retired before it was created`);
    }
    if (key.revoked_at !== undefined && key.revoked_at < key.created_at) {
      refuse(`key ${index} on the key page is revoked before it was created`);
    }
  }
  return page;
};

/** Builds the page a party serves from its public keys (kid computed), for `createKeyPageHandler`. */
export const buildKeyPage = async (page: {
  party: string;
  name?: string;
  addresses?: readonly string[];
  domains?: readonly string[];
  keys: readonly (PublicJwk & { created_at: number; retired_at?: number; revoked_at?: number })[];
}): Promise<KeyPage> =>
  parseKeyPage({
    party: page.party,
    ...(page.name === undefined ? {} : { name: page.name }),
    addresses: [...(page.addresses ?? [])],
    domains: [...(page.domains ?? [])],
    keys: await Promise.all(
      page.keys.map(async (key) => ({
        kty: "OKP",
        crv: "Ed25519",
        x: key.x,
        kid: await keyThumbprint(key),
        alg: "EdDSA",
        use: "sig",
        created_at: key.created_at,
        ...(key.retired_at === undefined ? {} : { retired_at: key.retired_at }),
        ...(key.revoked_at === undefined ? {} : { revoked_at: key.revoked_at }),
      })),
    ),
  });
