/**
 * The few parts of oidc-provider 8 (which ships no types) the holder uses. Kept narrow on
 * purpose: everything here is checked against the library's documented API.
 */
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  export interface InteractionPrompt {
    name: string;
    reasons: string[];
    details: Record<string, unknown>;
  }
  export interface Interaction {
    uid: string;
    prompt: InteractionPrompt;
    params: Record<string, unknown>;
    session?: { accountId?: string };
    grantId?: string;
    returnTo: string;
  }
  export interface GrantInstance {
    accountId: string;
    clientId: string;
    addOIDCScope(scope: string): void;
    addResourceScope(resource: string, scope: string): void;
    getResourceScope(resource: string): string;
    save(): Promise<string>;
    destroy(): Promise<void>;
  }
  export interface AccessTokenInstance {
    accountId: string;
    clientId: string;
    grantId: string;
    scope?: string;
    aud?: string | string[];
    exp: number;
    isExpired: boolean;
  }
  export interface ClientInstance {
    clientId: string;
    clientName?: string;
    redirectUris: string[];
  }

  /** The koa context a middleware given to `use` sees: the parts the holder reads and sets. */
  export interface ProviderContext {
    readonly req: IncomingMessage;
    readonly method: string;
    /** koa's parsed path, the one the provider's router matches. */
    readonly path: string;
    status: number;
    body: unknown;
    set(headers: Readonly<Record<string, string>>): void;
  }

  export class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    readonly issuer: string;
    proxy: boolean;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    /** A middleware run before the provider's own (its routing among them). */
    use(middleware: (ctx: ProviderContext, next: () => Promise<void>) => Promise<void>): void;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<Interaction>;
    interactionResult(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<string>;
    on(event: string, listener: (...args: unknown[]) => void): this;
    /**
     * The Koa application underneath: its "error" event gets (error, ctx); its middleware, the
     * provider's own, ends with its router's dispatch.
     */
    readonly app: {
      on(event: "error", listener: (...args: unknown[]) => void): unknown;
      readonly middleware: readonly unknown[];
    };
    Grant: {
      new (properties: { accountId: string; clientId: string }): GrantInstance;
      find(id: string): Promise<GrantInstance | undefined>;
    };
    AccessToken: { find(value: string): Promise<AccessTokenInstance | undefined> };
    Client: { find(id: string): Promise<ClientInstance | undefined> };
  }
  export const errors: {
    InvalidTarget: new (description?: string) => Error;
    InvalidScope: new (description?: string, scope?: string) => Error;
    /** `invalid_redirect_uri` when the description starts with "redirect_uris", else invalid_client_metadata. */
    InvalidClientMetadata: new (
      description: string,
    ) => Error;
  };
  export default Provider;
}
