import { MESSAGE_JWS_TYPE } from "../constants.js";
import { AgreementError } from "../errors.js";
import { type ParsedMessage, validateMessage } from "../message/parse.js";
import { signCanonicalText } from "./compact.js";
import { KEY_PAGE_FORM, keyPageOf } from "./header.js";
import type { SigningKey } from "./keys.js";

export interface SignMessageOptions {
  /** The signer's party key page, `https://<trusted host>/.well-known/agent-agreements/<party>.json`. */
  readonly jku: string;
}

export interface SignedMessage {
  readonly jws: string;
  readonly parsed: ParsedMessage;
}

/**
 * Signs a message as a compact JWS over its RFC 8785 form with {alg: EdDSA, kid, jku, typ:
 * agent-intent+jws}. The message must validate and carry no member the profile does not define;
 * when it names `from.party`, the key page must be that party's.
 */
export const signMessage = async (
  message: unknown,
  key: SigningKey,
  options: SignMessageOptions,
): Promise<SignedMessage> => {
  const page = keyPageOf(options.jku);
  if (!page)
    throw new AgreementError("ERR_JWS_HEADER", `jku must be a party key page address (${KEY_PAGE_FORM})`);
  const parsed = validateMessage(message);
  const party = parsed.message.from.party;
  if (party !== undefined && party !== page.party) {
    throw new AgreementError(
      "ERR_JWS_HEADER",
      `the message is from ${party} but jku is the key page of ${page.party}`,
    );
  }
  const jws = signCanonicalText(parsed.canonical, key, { jku: options.jku, typ: MESSAGE_JWS_TYPE });
  return { jws, parsed };
};
