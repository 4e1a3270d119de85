/**
 * The operator page, off unless the operator turns it on (`doorbell serve --operator-page`):
 *
 *   GET  /operator                              endpoint health, the chart, failed attempts, dead letters
 *   POST /operator/dead-letters/:id/replay      queues a dead letter again, then back to the page
 *
 * Guarded like /metrics (operator-access.ts). The replay form passes the same form guard as the
 * person's pages (html/security.ts): a browser that holds the Basic credentials sends them with a
 * forged cross-site POST too, so the guard is what refuses it. Every answer carries the page
 * headers, with the page's own stylesheet added to the CSP by hash.
 */
import {
  type DeliveryEngine,
  DeliveryError,
  type DeliveryTables,
  replayDeadLetter,
} from "@doorbell/delivery";
import type { Database } from "@doorbell/store";
import { type Context, Hono, type MiddlewareHandler } from "hono";
import type { Logger } from "pino";
import { contentSecurityPolicy } from "../html/layout.js";
import { createPageKit } from "../html/page-kit.js";
import { PAGE_HEADERS } from "../html/security.js";
import { operatorWordsFor } from "../i18n/operator-words.js";
import { type OperatorPageOptions, operatorAccess } from "./operator-access.js";
import { readOperatorView } from "./operator-data.js";
import { OPERATOR_STYLE, OperatorPage } from "./operator-page.js";

export const OPERATOR_PATH = "/operator";
const REPLAY_PATH = `${OPERATOR_PATH}/dead-letters/:id/replay`;
const DEAD_LETTER_ID = /^dlq_[0-9A-Za-z]{1,64}$/;
const OPERATOR_CSP = contentSecurityPolicy(OPERATOR_STYLE);

export interface OperatorPageDeps {
  /** The delivery engine's tables (the holder's database). */
  store: Database<DeliveryTables>;
  /** This process's counts are flushed before the chart is read, so it is current here. */
  delivery: Pick<DeliveryEngine, "flushStats">;
  holderName: string;
  publicUrl: string;
  clock: () => number;
  log: Pick<Logger, "error" | "debug">;
  options: OperatorPageOptions;
}

/** Why a replay was refused, by the delivery engine's error code. */
const REFUSALS = {
  ERR_DELIVERY_UNKNOWN_DEAD_LETTER: "unknown",
  ERR_DELIVERY_ALREADY_REPLAYED: "already",
  ERR_DELIVERY_SUBSCRIPTION_ENDED: "ended",
} as const;
type Refusal = (typeof REFUSALS)[keyof typeof REFUSALS];
const isRefusal = (value: string | undefined): value is Refusal =>
  value === "unknown" || value === "already" || value === "ended";

export function operatorRoutes(deps: OperatorPageDeps): Hono {
  const kit = createPageKit({ holderName: deps.holderName, publicUrl: deps.publicUrl, log: deps.log });
  const access = operatorAccess(deps.options);
  const routes = new Hono();

  const guarded: MiddlewareHandler = async (c, next) => {
    const refused = access?.(c);
    if (refused !== undefined) return refused;
    await next();
    for (const [name, value] of Object.entries(PAGE_HEADERS)) c.res.headers.set(name, value);
    c.res.headers.set("Content-Security-Policy", OPERATOR_CSP);
    c.res.headers.set("Pragma", "no-cache");
  };
  routes.use(OPERATOR_PATH, guarded);
  routes.use(`${OPERATOR_PATH}/*`, guarded);

  /** The notice a redirect after a replay asked for, from its query (nothing else is shown). */
  const noticeOf = (c: Context) => {
    const words = operatorWordsFor(kit.langOf(c)).notices;
    const replayed = c.req.query("replayed");
    if (replayed !== undefined && DEAD_LETTER_ID.test(replayed))
      return { ok: true, text: words.replayed(replayed) };
    const refused = c.req.query("refused");
    if (isRefusal(refused)) return { ok: false, text: words[refused] };
    return undefined;
  };

  routes.get(OPERATOR_PATH, async (c) => {
    try {
      await deps.delivery.flushStats();
      const view = await readOperatorView(deps.store.db, deps.clock());
      const lang = kit.langOf(c);
      return await kit.render(
        c,
        200,
        <OperatorPage
          holderName={deps.holderName}
          lang={lang}
          words={operatorWordsFor(lang)}
          view={view}
          csrf={kit.guard.issue(c)}
          notice={noticeOf(c)}
        />,
      );
    } catch (error) {
      return kit.fail(c, error, kit.unknownLink);
    }
  });

  routes.post(REPLAY_PATH, kit.tooLarge, async (c) => {
    const id = c.req.param("id") ?? "";
    const fields = await kit.postedForm(c);
    if (fields instanceof Response) return fields;
    const back = (query: string) => c.redirect(`${OPERATOR_PATH}?${query}#dead-letters`, 303);
    if (!DEAD_LETTER_ID.test(id)) return back("refused=unknown");
    try {
      await replayDeadLetter(deps.store, id, { clock: deps.clock });
      return back(`replayed=${id}`);
    } catch (error) {
      if (error instanceof DeliveryError && error.code in REFUSALS) {
        return back(`refused=${REFUSALS[error.code as keyof typeof REFUSALS]}`);
      }
      return kit.fail(c, error, kit.unknownLink);
    }
  });

  routes.all(OPERATOR_PATH, kit.methodNotAllowed("GET, HEAD"));
  routes.all(REPLAY_PATH, kit.methodNotAllowed("POST"));
  return routes;
}
