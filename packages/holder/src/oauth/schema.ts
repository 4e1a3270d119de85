/**
 * The holder's OAuth tables (migration set `holder-oauth`, run after `holder`):
 *
 *   holder_oauth_models    everything oidc-provider stores (codes, tokens, grants, sessions,
 *                          interactions, registered clients), one row per model instance. The
 *                          id (a token value for opaque tokens) is stored only as a keyed hash and
 *                          the payload only sealed, so the table holds no usable credential.
 *   holder_oauth_accounts  a signed-in person: an opaque account id (the token's subject), the
 *                          keyed hash of the verified e-mail (to find the account again) and the
 *                          e-mail sealed (the contact of the intents published with a token),
 *                          and the consent version the person last agreed to (its language).
 *   holder_oauth_signins   one-time sign-in links sent by e-mail: keyed hash of the token, the
 *                          interaction it finishes, the address sealed, when it ends and was used.
 *   holder_oauth_owners    who an intent published with a token belongs to: the account and the
 *                          client (an intent is visible to the client that published it only).
 *   holder_oauth_secrets   the provider's own keys (signing JWKS, cookie keys), sealed.
 */
import { defineMigrations, type Migration } from "@doorbell/store";

export interface OAuthModelRow {
  /** oidc-provider's model name: AccessToken, Grant, Client, Interaction, Session, … */
  model: string;
  /** Keyed hash of the model's id (`ctx.codes`). */
  id_hash: string;
  /** The payload as JSON, sealed and bound to the model and the id hash. */
  payload_sealed: string;
  /** The grant a token belongs to (revocation by grant); not a credential. */
  grant_id: string | null;
  /** Keyed hash of the Session/Interaction uid (lookups by uid). */
  uid_hash: string | null;
  /** Grants only: whose grant it is (the manage page lists them). */
  account_id: string | null;
  /** Grants only: the client it was given to. */
  client_id: string | null;
  expires_at: number | null;
  consumed_at: number | null;
}

export interface OAuthAccountRow {
  id: string;
  contact_hash: string;
  email_sealed: string;
  created_at: number;
  /**
   * The consent text (by its version, so in its language) the person last agreed to on the
   * approval page: the intents published for them record it, and their mails speak its language.
   */
  consent_version: string | null;
}

export interface OAuthSignInRow {
  token_hash: string;
  /** Keyed hash of the interaction uid this link finishes. */
  interaction_hash: string;
  email_sealed: string;
  expires_at: number;
  used_at: number | null;
}

export interface OAuthOwnerRow {
  intent_id: string;
  account_id: string;
  client_id: string;
}

export interface OAuthSecretRow {
  name: string;
  sealed: string;
}

export interface OAuthTables {
  holder_oauth_models: OAuthModelRow;
  holder_oauth_accounts: OAuthAccountRow;
  holder_oauth_signins: OAuthSignInRow;
  holder_oauth_owners: OAuthOwnerRow;
  holder_oauth_secrets: OAuthSecretRow;
}

const tables: Migration = {
  version: 1,
  name: "provider_accounts_owners",
  async up(db, { types }) {
    await db.schema
      .createTable("holder_oauth_models")
      .addColumn("model", "text", (c) => c.notNull())
      .addColumn("id_hash", "text", (c) => c.notNull())
      .addColumn("payload_sealed", "text", (c) => c.notNull())
      .addColumn("grant_id", "text")
      .addColumn("uid_hash", "text")
      .addColumn("account_id", "text")
      .addColumn("client_id", "text")
      .addColumn("expires_at", types.timestamp)
      .addColumn("consumed_at", types.timestamp)
      .addPrimaryKeyConstraint("holder_oauth_models_pk", ["model", "id_hash"])
      .execute();
    await db.schema
      .createIndex("holder_oauth_models_grant")
      .on("holder_oauth_models")
      .column("grant_id")
      .execute();
    await db.schema
      .createIndex("holder_oauth_models_uid")
      .on("holder_oauth_models")
      .column("uid_hash")
      .execute();
    await db.schema
      .createIndex("holder_oauth_models_account")
      .on("holder_oauth_models")
      .columns(["account_id", "model"])
      .execute();

    await db.schema
      .createTable("holder_oauth_accounts")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("contact_hash", "text", (c) => c.notNull().unique())
      .addColumn("email_sealed", "text", (c) => c.notNull())
      .addColumn("created_at", types.timestamp, (c) => c.notNull())
      .execute();

    await db.schema
      .createTable("holder_oauth_signins")
      .addColumn("token_hash", "text", (c) => c.primaryKey())
      .addColumn("interaction_hash", "text", (c) => c.notNull())
      .addColumn("email_sealed", "text", (c) => c.notNull())
      .addColumn("expires_at", types.timestamp, (c) => c.notNull())
      .addColumn("used_at", types.timestamp)
      .execute();

    await db.schema
      .createTable("holder_oauth_owners")
      .addColumn("intent_id", "text", (c) =>
        c.primaryKey().references("holder_intents.id").onDelete("cascade"),
      )
      .addColumn("account_id", "text", (c) => c.notNull().references("holder_oauth_accounts.id"))
      .addColumn("client_id", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("holder_oauth_owners_account")
      .on("holder_oauth_owners")
      .columns(["account_id", "client_id"])
      .execute();

    await db.schema
      .createTable("holder_oauth_secrets")
      .addColumn("name", "text", (c) => c.primaryKey())
      .addColumn("sealed", "text", (c) => c.notNull())
      .execute();
  },
};

/** Version 2: the consent text an account last agreed to (the language of its intents' mails). */
const accountConsentVersion: Migration = {
  version: 2,
  name: "accounts_consent_version",
  async up(db) {
    await db.schema.alterTable("holder_oauth_accounts").addColumn("consent_version", "text").execute();
  },
};

/** Later versions are appended here; a released version never changes. */
export const oauthMigrations = defineMigrations("holder-oauth", [tables, accountConsentVersion]);
