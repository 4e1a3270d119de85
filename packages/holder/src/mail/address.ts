/** E-mail addresses typed on the consent page or the sign-in page: checked and normalised. */
import { domainToASCII } from "node:url";
import { HolderError } from "../model/types.js";

const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const TLD = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;

export interface NormalisedEmail {
  /** What mail is sent to: the local part as given, the domain in lower-case ASCII (IDNA). */
  address: string;
  /** What the keyed hash is taken of: the whole address in lower case. */
  key: string;
}

/**
 * Checks and normalises an e-mail address typed on the consent page. Messages never repeat the
 * address. Quoted local parts, IP-literal domains and non-ASCII local parts are refused: they are
 * legal but rarely real, and every one of them is a way to hide something in a stored value.
 */
export function normaliseEmail(value: unknown): NormalisedEmail {
  const invalid = (why: string) =>
    new HolderError("ERR_HOLDER_INVALID", `${why}; enter an address like name@example.sk`);
  if (typeof value !== "string") throw invalid("the e-mail address is missing");
  const trimmed = value.normalize("NFC").trim();
  if (trimmed === "") throw invalid("the e-mail address is empty");
  if (trimmed.length > 254) throw invalid("the e-mail address is longer than 254 characters");
  if (/[\s\p{C}]/u.test(trimmed))
    throw invalid("the e-mail address must not contain spaces, line breaks or invisible characters");
  const at = trimmed.lastIndexOf("@");
  if (at < 0 || trimmed.indexOf("@") !== at) throw invalid("the e-mail address needs exactly one @");
  const local = trimmed.slice(0, at);
  const rawDomain = trimmed.slice(at + 1);
  if (local === "") throw invalid("the part before @ is empty");
  if (local.length > 64) throw invalid("the part before @ is longer than 64 characters");
  if (!LOCAL_PART.test(local)) {
    throw invalid(
      "the part before @ may hold only letters, digits, dots (not two in a row, not first or last) and !#$%&'*+/=?^_`{|}~-",
    );
  }
  if (rawDomain === "") throw invalid("the part after @ is empty");
  if (rawDomain.startsWith("[")) throw invalid("the part after @ must be a domain name, not an IP address");
  // Letters (any script), digits, dots and hyphens only: IDNA would silently drop anything else.
  if (!/^[\p{L}\p{M}\p{N}.-]+$/u.test(rawDomain))
    throw invalid("the part after @ is not a valid domain name");
  const domain = domainToASCII(rawDomain.toLowerCase());
  if (domain === "") throw invalid("the part after @ is not a valid domain name");
  const labels = domain.split(".");
  if (labels.length < 2 || labels.some((label) => !LABEL.test(label)) || !TLD.test(labels.at(-1) as string)) {
    throw invalid("the part after @ is not a valid domain name");
  }
  const address = `${local}@${domain}`;
  if (address.length > 254) throw invalid("the e-mail address is longer than 254 characters");
  return { address, key: address.toLowerCase() };
}
