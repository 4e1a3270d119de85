/**
 * Who an intent published with a token belongs to, and what that gives:
 *
 *  - `oauthAccess`: a signed-in client reaches an intent only when the same person published it
 *    through the same client (another assistant of the same person sees nothing of it);
 *  - `oauthPublish`: the person's verified sign-in address becomes the intent's contact (sealed by
 *    the intent service), the owner row is written in the publishing transaction, and the person
 *    gets the intent's manage link by e-mail;
 *  - the manage page's list of assistants (grants of the person) and revoking one.
 */
import { asTables, type Database, type Transaction } from "@doorbell/store";
import type { Provider } from "oidc-provider";
import { formatDateTime } from "../i18n/format.js";
import { mailWordsFor } from "../i18n/mail-words.js";
import type { IntentServiceOptions, OAuthPrincipal } from "../intents/index.js";
import { normaliseEmail } from "../mail/address.js";
import { listUnsubscribeHeaders } from "../mail/list-unsubscribe.js";
import type { Lang } from "../model/languages.js";
import { quoteText } from "../model/quoting.js";
import type { HolderTables } from "../model/tables.js";
import type { Intent } from "../model/types.js";
import type { OAuthTables } from "./schema.js";
import { accountByContactHash, accountEmail, agreedConsentVersion, type SignInContext } from "./signin.js";

export function intentOwnership(
  ctx: SignInContext,
): Required<Pick<IntentServiceOptions, "oauthAccess" | "oauthPublish">> {
  return {
    async oauthAccess(principal, intentId) {
      const row = await ctx.store.db
        .selectFrom("holder_oauth_owners")
        .select(["account_id", "client_id"])
        .where("intent_id", "=", intentId)
        .executeTakeFirst();
      return (
        row !== undefined && row.account_id === principal.subject && row.client_id === principal.clientId
      );
    },
    oauthPublish: {
      async contactOf(principal: OAuthPrincipal) {
        const email = await accountEmail(ctx, principal.subject);
        if (email === undefined) return undefined;
        const consentVersion = await agreedConsentVersion(ctx, principal.subject);
        return {
          email,
          contactHash: ctx.contacts.hash(normaliseEmail(email).key),
          ...(consentVersion === undefined ? {} : { consentVersion }),
        };
      },
      async recordOwner(trx: Transaction<HolderTables>, intentId: string, principal: OAuthPrincipal) {
        await asTables<OAuthTables>(trx)
          .insertInto("holder_oauth_owners")
          .values({ intent_id: intentId, account_id: principal.subject, client_id: principal.clientId })
          .execute();
      },
      async published(intent: Intent, email: string, manageUrl: string, lang: Lang) {
        const words = mailWordsFor(lang).published;
        // English keeps the instant as it always showed it; the others write it their way.
        const until = lang === "en" ? intent.validUntil : formatDateTime(intent.validUntil, lang);
        const text = [
          words.published(ctx.config.name),
          "",
          quoteText(intent.statement)
            .split("\n")
            .map((line) => `> ${line}`)
            .join("\n"),
          "",
          words.activeUntil(until),
          words.manage(manageUrl),
        ].join("\n");
        await ctx.mailer.send({
          to: email,
          subject: words.subject(ctx.config.name),
          text,
          html: `<div lang="${lang}">${text
            .split("\n")
            .map((line) => `<p>${line.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`)}</p>`)
            .join("")}</div>`,
          // One-click List-Unsubscribe stops the intent's notifications.
          headers: listUnsubscribeHeaders(manageUrl),
        });
      },
    },
  };
}

/** One assistant with access, as the manage page lists it. */
export interface AssistantAccess {
  grantId: string;
  clientName: string;
  /** The host(s) its sign-in redirects to. */
  redirectHosts: string[];
  scopes: string[];
}

export interface AssistantAccessService {
  /** The assistants the person of this intent (by its contact hash) has let in. */
  listFor(contactHash: string | null): Promise<AssistantAccess[]>;
  /** Revokes one grant of that person at once: its tokens stop working. False: not theirs. */
  revoke(contactHash: string | null, grantId: string): Promise<boolean>;
}

export function assistantAccess(
  ctx: SignInContext,
  provider: Provider,
  resource: string,
): AssistantAccessService {
  async function grantsOf(accountId: string): Promise<{ grantId: string; clientId: string }[]> {
    const rows = await ctx.store.db
      .selectFrom("holder_oauth_models")
      .select(["grant_id", "client_id", "expires_at"])
      .where("model", "=", "Grant")
      .where("account_id", "=", accountId)
      .execute();
    const now = Date.now();
    return rows
      .filter((row) => row.grant_id !== null && row.client_id !== null)
      .filter((row) => row.expires_at === null || Number(row.expires_at) > now)
      .map((row) => ({ grantId: row.grant_id as string, clientId: row.client_id as string }));
  }
  const account = (contactHash: string | null) =>
    contactHash === null ? Promise.resolve(undefined) : accountByContactHash(ctx, contactHash);

  return {
    async listFor(contactHash) {
      const accountId = await account(contactHash);
      if (accountId === undefined) return [];
      const out: AssistantAccess[] = [];
      for (const { grantId, clientId } of await grantsOf(accountId)) {
        const grant = await provider.Grant.find(grantId);
        if (grant === undefined) continue;
        const client = await provider.Client.find(clientId);
        out.push({
          grantId,
          clientName: client?.clientName ?? clientId,
          redirectHosts: [...new Set((client?.redirectUris ?? []).map(hostOf))],
          scopes: (grant.getResourceScope(resource) ?? "").split(" ").filter((s) => s !== ""),
        });
      }
      return out;
    },
    async revoke(contactHash, grantId) {
      const accountId = await account(contactHash);
      if (accountId === undefined) return false;
      if (!(await grantsOf(accountId)).some((grant) => grant.grantId === grantId)) return false;
      const grant = await provider.Grant.find(grantId);
      await grant?.destroy();
      // The grant's codes and tokens (refresh tokens included) go with it.
      await ctx.store.db.deleteFrom("holder_oauth_models").where("grant_id", "=", grantId).execute();
      ctx.log.info({ event: "oauth.grant_revoked" }, "an assistant's access was revoked");
      return true;
    },
  };
}

function hostOf(uri: string): string {
  try {
    return new URL(uri).host || new URL(uri).protocol;
  } catch {
    return "an app on your device";
  }
}

/** The manage page's view of access: the assistants of the person behind one intent. */
export interface IntentAssistants {
  list(intentId: string): Promise<AssistantAccess[]>;
  /** Revokes one of that person's grants at once. False: not theirs (or already gone). */
  revoke(intentId: string, grantId: string): Promise<boolean>;
}

/** The person is found by the intent's verified contact (its keyed hash), never by anything the page sends. */
export function assistantsOfIntent(
  store: Database<HolderTables>,
  access: AssistantAccessService,
): IntentAssistants {
  const contactHashOf = async (intentId: string): Promise<string | null> =>
    (
      await store.db
        .selectFrom("holder_intents")
        .select("contact_hash")
        .where("id", "=", intentId)
        .executeTakeFirst()
    )?.contact_hash ?? null;
  return {
    list: async (intentId) => access.listFor(await contactHashOf(intentId)),
    revoke: async (intentId, grantId) => access.revoke(await contactHashOf(intentId), grantId),
  };
}
