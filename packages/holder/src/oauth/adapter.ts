/**
 * oidc-provider's storage adapter over `@doorbell/store` (Kysely on SQLite or PostgreSQL): one
 * class per model name, as the provider expects (`new Adapter("AccessToken")`).
 *
 * Nothing usable is stored in clear: a model's id (for opaque tokens and codes the id *is* the
 * credential) is stored as a keyed hash and found again through `lookupHashes`, and the payload
 * (client secrets of registered clients, scopes, account ids) is sealed and bound to the model
 * and the id hash. Only the grant id, a grant's account and client, and the times are columns:
 * revocation by grant and the manage page's list need them.
 *
 * A client id that is an https URL is a client ID metadata document: it is not stored but
 * fetched (client-metadata.ts) when the provider looks the client up.
 */
import type { CodeHasher, Database, Sealer } from "@doorbell/store";
import type { OAuthTables } from "./schema.js";

/** What oidc-provider hands an adapter; only a few fields matter here. */
export type AdapterPayload = Record<string, unknown> & {
  grantId?: string;
  uid?: string;
  accountId?: string;
  clientId?: string;
  consumed?: number;
};

/** Reads a client's metadata document (client-metadata.ts); declared here, where the adapter uses it. */
export type ClientMetadataResolver = (clientId: string) => Promise<AdapterPayload | undefined>;

export interface AdapterDeps {
  store: Database<OAuthTables>;
  sealer: Sealer;
  codes: CodeHasher;
  /** Client ID metadata documents (`client_id` an https URL); none: such ids are unknown. */
  clientMetadata?: ClientMetadataResolver;
  /** Epoch milliseconds; must be the provider's clock (real time). */
  now?: () => number;
  /**
   * A registered client ends after this many seconds unless a person allows it
   * (its first grant keeps it). Default: kept.
   */
  unusedClientTtlSeconds?: number;
}

export interface OidcAdapter {
  upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void>;
  find(id: string): Promise<AdapterPayload | undefined>;
  findByUid(uid: string): Promise<AdapterPayload | undefined>;
  findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
  consume(id: string): Promise<void>;
  destroy(id: string): Promise<void>;
  revokeByGrantId(grantId: string): Promise<void>;
}

export type OidcAdapterClass = new (model: string) => OidcAdapter;

const aad = (model: string, idHash: string): string => `holder.oauth.${model}:${idHash}`;

export function createStoreAdapter(deps: AdapterDeps): OidcAdapterClass {
  const { store, sealer, codes } = deps;
  const now = deps.now ?? Date.now;
  const db = store.db;

  return class StoreAdapter implements OidcAdapter {
    readonly model: string;
    constructor(model: string) {
      this.model = model;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      const idHash = codes.hash(id);
      // A registered client lives only until a person allows it (then it has a grant).
      const ttl =
        this.model === "Client" && expiresIn === undefined ? deps.unusedClientTtlSeconds : expiresIn;
      const row = {
        model: this.model,
        id_hash: idHash,
        payload_sealed: sealer.seal(JSON.stringify(payload), aad(this.model, idHash)),
        // A grant is filed under its own id, so revoking by grant removes it with its tokens.
        grant_id: this.model === "Grant" ? id : typeof payload.grantId === "string" ? payload.grantId : null,
        uid_hash: typeof payload.uid === "string" ? codes.hash(payload.uid) : null,
        account_id:
          this.model === "Grant" && typeof payload.accountId === "string" ? payload.accountId : null,
        client_id: this.model === "Grant" && typeof payload.clientId === "string" ? payload.clientId : null,
        expires_at: ttl === undefined ? null : now() + ttl * 1000,
        consumed_at: null,
      };
      await store.transaction(async (trx) => {
        await trx
          .deleteFrom("holder_oauth_models")
          .where("model", "=", this.model)
          .where("id_hash", "in", codes.lookupHashes(id))
          .execute();
        await trx.insertInto("holder_oauth_models").values(row).execute();
        if (this.model === "Grant" && typeof payload.clientId === "string") {
          // The client was used: it stays as long as the provider keeps clients.
          await trx
            .updateTable("holder_oauth_models")
            .set({ expires_at: null })
            .where("model", "=", "Client")
            .where("id_hash", "in", codes.lookupHashes(payload.clientId))
            .execute();
        }
      });
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      if (typeof id !== "string" || id === "" || id.length > 2048) return undefined;
      if (this.model === "Client" && id.startsWith("https://")) return deps.clientMetadata?.(id);
      const row = await db
        .selectFrom("holder_oauth_models")
        .selectAll()
        .where("model", "=", this.model)
        .where("id_hash", "in", codes.lookupHashes(id))
        .executeTakeFirst();
      return row === undefined || !codes.verify(id, row.id_hash) ? undefined : this.open(row);
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      if (typeof uid !== "string" || uid === "") return undefined;
      const rows = await db
        .selectFrom("holder_oauth_models")
        .selectAll()
        .where("model", "=", this.model)
        .where("uid_hash", "in", codes.lookupHashes(uid))
        .execute();
      const row = rows[0];
      return row === undefined ? undefined : this.open(row);
    }

    // The device flow is off: there are no user codes.
    async findByUserCode(): Promise<AdapterPayload | undefined> {
      return undefined;
    }

    async consume(id: string): Promise<void> {
      await db
        .updateTable("holder_oauth_models")
        .set({ consumed_at: now() })
        .where("model", "=", this.model)
        .where("id_hash", "in", codes.lookupHashes(id))
        .execute();
    }

    async destroy(id: string): Promise<void> {
      await db
        .deleteFrom("holder_oauth_models")
        .where("model", "=", this.model)
        .where("id_hash", "in", codes.lookupHashes(id))
        .execute();
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await db.deleteFrom("holder_oauth_models").where("grant_id", "=", grantId).execute();
    }

    private open(row: {
      id_hash: string;
      payload_sealed: string;
      expires_at: number | null;
      consumed_at: number | null;
    }): AdapterPayload | undefined {
      if (row.expires_at !== null && Number(row.expires_at) <= now()) return undefined;
      const payload = JSON.parse(
        sealer.openText(row.payload_sealed, aad(this.model, row.id_hash)),
      ) as AdapterPayload;
      if (row.consumed_at !== null) payload.consumed = Math.floor(Number(row.consumed_at) / 1000);
      return payload;
    }
  };
}

/** Drops rows past their end (the provider never asks for them again). */
export async function purgeExpiredModels(store: Database<OAuthTables>, now: number): Promise<number> {
  const result = await store.db
    .deleteFrom("holder_oauth_models")
    .where("expires_at", "<=", now)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
