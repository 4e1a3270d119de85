/**
 * Which of the built-in authorization server's routes a request takes, as oidc-provider's own
 * router decides it, so that what is keyed on a route (the registration limit, the metrics label)
 * sees every spelling the router accepts.
 *
 * oidc-provider routes with @koa/router on koa's parsed path: any case and an optional trailing
 * slash (`/reg`, `/reg/`, `/REG`, `/Reg/` are all registration), and a `#fragment` sent in the
 * request line is dropped. A guard comparing the path as a string counted `/oauth/reg` and missed
 * the rest, so registrations were unlimited. Here the router itself is asked, with the very path
 * and method its dispatch will use, in a middleware that runs just before it (`provider.use`).
 *
 * `provider.use` and `provider.app` are oidc-provider's documented API; the router is found on the
 * app as @koa/router's dispatch middleware (`.router`, asked with `match`), which is not. If a
 * later version hides it, the holder refuses to start rather than run its routes unguarded.
 */
import type { IncomingMessage } from "node:http";
import type Provider from "oidc-provider";

/** One of the provider's routes, as its router picked it for a request. */
export interface ProviderRoute {
  /** The provider's own name for it (`ctx.oidc.route`): `registration`, `token`, `resume`… */
  readonly name: string;
  /** Its pattern under the issuer, e.g. `/reg` or `/auth/:uid`. */
  readonly pattern: string;
}

/** An answer given instead of the provider's (a limit's 429). */
export interface RouteRefusal {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** Asked before the provider serves a route; an answer it gives is sent instead. */
export type RouteGuard = (route: ProviderRoute, req: IncomingMessage) => Promise<RouteRefusal | undefined>;

/** What the holder asks of @koa/router's router (Router#match). */
interface RouterLike {
  match(
    path: string,
    method: string,
  ): { route: boolean; pathAndMethod: { name: string | null; path: string }[] };
}

function routerOf(provider: Provider): RouterLike {
  for (const middleware of provider.app.middleware) {
    const router = (middleware as { router?: Partial<RouterLike> }).router;
    if (typeof router?.match === "function") return router as RouterLike;
  }
  throw new Error(
    "oidc-provider's router was not found on its app: the routes' limits cannot be keyed on the routes it picks",
  );
}

/**
 * Puts `guard` in front of the provider's routes and remembers the route each request took.
 * Call once, after the provider is made.
 */
export function routeProvider(
  provider: Provider,
  guard?: RouteGuard,
): { routeOf(req: IncomingMessage): ProviderRoute | undefined } {
  const router = routerOf(provider);
  const taken = new WeakMap<IncomingMessage, ProviderRoute>();
  provider.use(async (ctx, next) => {
    const matched = router.match(ctx.path, ctx.method);
    // Dispatch runs the layers matching path and method; the last one names the route.
    const layer = matched.route ? matched.pathAndMethod.at(-1) : undefined;
    if (layer !== undefined && layer.name !== null) {
      const route: ProviderRoute = { name: layer.name, pattern: layer.path };
      taken.set(ctx.req, route);
      const refusal = await guard?.(route, ctx.req);
      if (refusal !== undefined) {
        ctx.status = refusal.status;
        ctx.set(refusal.headers);
        ctx.body = refusal.body;
        return;
      }
    }
    await next();
  });
  return { routeOf: (req) => taken.get(req) };
}
