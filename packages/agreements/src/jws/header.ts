import { parseJson } from "../canonical/parse-json.js";
import { JWS_ALGORITHM, KEY_PAGE_PATH_PREFIX } from "../constants.js";
import { AgreementError } from "../errors.js";

/** The protected header of a message signature or a record seal: exactly these four members. */
export interface ProtectedHeader {
  readonly alg: typeof JWS_ALGORITHM;
  readonly kid: string;
  readonly jku: string;
  readonly typ: string;
}

const MEMBERS = new Set(["alg", "kid", "jku", "typ"]);
const KID = /^[A-Za-z0-9_-]{43}$/;
const PARTY_PAGE = /^\/\.well-known\/agent-agreements\/(pty_[a-z0-9]{20})\.json$/;

const refuse = (message: string): never => {
  throw new AgreementError("ERR_JWS_HEADER", message);
};

/** RFC 7515 §4.1.9: a `typ` without a slash means `application/…`, compared case-insensitively. */
export const typMatches = (typ: string, expected: string): boolean => {
  const lower = typ.toLowerCase();
  return lower === expected || lower === `application/${expected}`;
};

/**
 * The party id a key page address names, or undefined when the address is not of the form
 * `https://host/.well-known/agent-agreements/{party}.json` (no user, query or fragment).
 * Whether the host is trusted is the trust rule's question, not this one's.
 */
export const keyPageParty = (jku: string): { url: URL; party: string } | undefined => {
  const found = keyPageOf(jku);
  return found === undefined ? undefined : { url: new URL(found.href), party: found.party };
};

export interface KeyPageAddress {
  readonly href: string;
  readonly origin: string;
  readonly party: string;
}

// Every signature names its jku, and a verifier sees the same few: each is parsed once.
const addresses = new Map<string, KeyPageAddress | null>();

/** `keyPageParty` as plain strings, memoised: for the checks every signature goes through. */
export const keyPageOf = (jku: string): KeyPageAddress | undefined => {
  let found = addresses.get(jku);
  if (found === undefined) {
    const read = readKeyPageParty(jku);
    found =
      read === undefined
        ? null
        : Object.freeze({ href: read.url.href, origin: read.url.origin, party: read.party });
    if (addresses.size >= 1000) addresses.clear();
    if (jku.length <= 2048) addresses.set(jku, found);
  }
  return found ?? undefined;
};

const readKeyPageParty = (jku: string): { url: URL; party: string } | undefined => {
  let url: URL;
  try {
    url = new URL(jku);
  } catch {
    return undefined;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return undefined;
  if (url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "") return undefined;
  if (jku.includes("?") || jku.includes("#")) return undefined;
  const match = PARTY_PAGE.exec(url.pathname);
  if (!match?.[1]) return undefined;
  return { url, party: match[1] };
};

export const KEY_PAGE_FORM = `https://<host>${KEY_PAGE_PATH_PREFIX}<party>.json`;

/**
 * Reads and checks a protected header: strict JSON, exactly alg, kid, jku and typ, alg EdDSA,
 * kid a SHA-256 thumbprint, jku a party key page address, typ the expected type. Members such as
 * `jwk`, `x5u` or `crit` are refused: a key never comes from the message itself.
 */
export const checkProtectedHeader = (bytes: Uint8Array, expectedTyp: string): ProtectedHeader => {
  const value = parseJson(bytes, "the JWS protected header");
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return refuse("the JWS protected header is not a JSON object");
  }
  const extra = Object.keys(value).filter((name) => !MEMBERS.has(name));
  if (extra.length > 0) {
    return refuse(
      `the JWS protected header has ${extra.map((m) => JSON.stringify(m)).join(", ")}; only alg, kid, jku and typ are allowed`,
    );
  }
  const { alg, kid, jku, typ } = value as Record<string, unknown>;
  if (alg !== JWS_ALGORITHM)
    return refuse(`the JWS algorithm is ${JSON.stringify(alg)}; only EdDSA (Ed25519) is accepted`);
  if (typeof typ !== "string" || !typMatches(typ, expectedTyp)) {
    return refuse(`the JWS typ is ${JSON.stringify(typ)}, not ${expectedTyp}`);
  }
  if (typeof kid !== "string" || !KID.test(kid))
    return refuse("the JWS kid is not an RFC 7638 SHA-256 thumbprint");
  if (typeof jku !== "string" || jku.length > 2048 || keyPageOf(jku) === undefined) {
    return refuse(`the JWS jku is not a party key page address (${KEY_PAGE_FORM})`);
  }
  return { alg, kid, jku, typ };
};
