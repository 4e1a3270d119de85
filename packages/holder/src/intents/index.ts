/**
 * Intents: publish a draft (consent-link rule 1), find the intent an intentCode stands for
 * (rules 2 and 4), read, update, withdraw and expire. Codes and page tokens are stored only as
 * keyed hashes (`ctx.codes`), the hidden limit and the contact only sealed (`ctx.sealer`) and bound
 * to the intent's id. No method returns a contact, a hidden limit or a token; `publish` returns
 * the new intentCode once. Each operation lives in its own module under intents/; this one binds
 * them into the service and re-exports what the rest of the holder uses.
 */
import type { HolderContext } from "../context.js";
import type { IntentService } from "../model/services.js";
import { HolderError } from "../model/types.js";
import { authorize } from "./access.js";
import type { IntentServiceOptions, Intents } from "./context.js";
import { expireDue } from "./expire.js";
import { type IntentHooks, noIntentHooks } from "./hooks.js";
import { codeResolver } from "./principal-for-code.js";
import { publish, publishSignedIn } from "./publish.js";
import { offerRenewal } from "./renewal.js";
import { intentFromRow, loadIntentRow } from "./rows.js";
import { update } from "./update.js";
import { validatePublish } from "./validate.js";
import { withdraw } from "./withdraw.js";

export {
  CODE_CHARS,
  INTENT_CODE_PREFIX,
  newIntentCode,
  newPageToken,
  PAGE_TOKEN,
  randomBase62,
  TAKEN_PREFIX,
} from "./codes.js";
export type { IntentServiceOptions, OAuthPrincipal } from "./context.js";
export { type EndReason, type IntentHooks, noIntentHooks, runHook, sendQuietly } from "./hooks.js";
export { effectiveStatus, findByToken, type IntentRecord, intentFromRow } from "./rows.js";
export {
  contactAad,
  type HiddenLimit,
  hiddenLimitAad,
  manageUrl,
  openContact,
  openHiddenLimit,
  type SealedContact,
  sealContact,
  sealHiddenLimit,
} from "./sealed.js";
export {
  COUNTRY_CURRENCY,
  parseIsoInstant,
  type ValidPublish,
  validateArea,
  validateBudget,
  validateCriteria,
  validateHiddenLimit,
  validatePublish,
  validateStatement,
} from "./validate.js";
export { type EndedIntent, withdrawIntent } from "./withdraw.js";

export function createIntentService(
  ctx: HolderContext,
  hooks: IntentHooks = noIntentHooks,
  options: IntentServiceOptions = {},
): IntentService {
  const intents: Intents = { ctx, hooks, options };
  return {
    async publishSignedIn(principal, input) {
      if (typeof principal !== "object" || principal === null || principal.kind !== "oauth") {
        throw new HolderError("ERR_HOLDER_FORBIDDEN", "publishing for a person needs them signed in");
      }
      const now = ctx.clock();
      return publishSignedIn(intents, principal, validatePublish(input, now, ctx.config), now);
    },
    publish: (input) => publish(intents, input),
    principalForCode: codeResolver(ctx),
    readableIntent: (principal, id) => authorize(intents, principal, id),
    async get(principal, id) {
      const intentId = await authorize(intents, principal, id);
      return intentFromRow(await loadIntentRow(ctx, intentId), ctx.clock());
    },
    update: (principal, id, changes) => update(intents, principal, id, changes),
    offerRenewal: (principal, id, validUntil) => offerRenewal(intents, principal, id, validUntil),
    withdraw: (principal, id) => withdraw(intents, principal, id),
    expireDue: (signal) => expireDue(intents, signal),
  };
}
