/**
 * The public agreement checker (agent-agreement/1): anyone pastes or uploads a record
 * and reads which result it gives, with the reason in plain words. No sign-in, no state: nothing
 * is stored. Trust is configuration: no key page host is trusted unless the operator
 * names it (`options.trustedOrigins`, fetched through the SSRF-safe fetch of
 * `@doorbell/agreements`); otherwise, or as well, the visitor pastes or uploads the key pages
 * the record's signers gave them, and those are trusted as given. The page says which applies.
 *
 *   GET  /check   the form (record and key pages: text areas and file inputs)
 *   POST /check   the result (multipart or urlencoded; a record is at most 256 KB)
 */
import {
  type CheckOptions,
  type CheckResult,
  checkRecord,
  MAX_KEY_PAGE_BYTES,
  MAX_RECORD_BYTES,
  staticKeyPages,
  verdictTitle,
} from "@doorbell/agreements";
import type { Context, Env, Hono, MiddlewareHandler, Schema } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { FC } from "hono/jsx";
import { Layout } from "../../html/layout.js";
import { pageHeaders } from "../../html/security.js";

export const CHECK_PATH = "/check";
/** At most this many key pages with one record (two parties sign; a few spares). */
const MAX_KEY_PAGES = 8;
/** A record (256 KB), its key pages, and the form's own bytes. */
const MAX_CHECK_FORM_BYTES = MAX_RECORD_BYTES + 2 * MAX_KEY_PAGE_BYTES + 16 * 1024;

const titleOf = (result: CheckResult): string =>
  verdictTitle(result.result, result.ok ? result.keys : undefined);

/** Which hosts this page trusts, in words for the page. */
const TrustNote: FC<{ origins: readonly string[] }> = ({ origins }) => (
  <p class="hint" id="trust">
    {origins.length === 0
      ? "This holder trusts no key page host: a record checks out here only against the key pages you give below, which are trusted as given."
      : `This holder fetches key pages from ${origins.join(", ")} (set by its operator); key pages you give below are used instead when you give them.`}
  </p>
);

const CheckForm: FC<{ record?: string; keyPages?: string; problem?: string; origins: readonly string[] }> = ({
  record,
  keyPages,
  problem,
  origins,
}) => (
  <form method="post" action={CHECK_PATH} enctype="multipart/form-data">
    {problem !== undefined && (
      <div class="alert" role="alert">
        <p>{problem}</p>
      </div>
    )}
    <div class="field">
      <label for="record">The record (JSON)</label>
      <span class="hint" id="record-hint">
        Paste the agreement record an agent gave you, or choose its file below. At most 256 KB.
      </span>
      <textarea id="record" name="record" rows={12} aria-describedby="record-hint" spellcheck={false}>
        {record ?? ""}
      </textarea>
    </div>
    <div class="field">
      <label for="file">Or a record file</label>
      <input type="file" id="file" name="file" accept="application/json,.json" />
    </div>
    <div class="field">
      <label for="keypages">Key pages (JSON)</label>
      <span class="hint" id="keypages-hint">
        The signers' key pages: one page, several one after another, or a JSON array of pages.
      </span>
      <TrustNote origins={origins} />
      <textarea
        id="keypages"
        name="keypages"
        rows={6}
        aria-describedby="keypages-hint trust"
        spellcheck={false}
      >
        {keyPages ?? ""}
      </textarea>
    </div>
    <div class="field">
      <label for="keypagefiles">Or key page files</label>
      <input type="file" id="keypagefiles" name="keypagefiles" accept="application/json,.json" multiple />
    </div>
    <button type="submit">Check this record</button>
  </form>
);

const CheckPage: FC<{
  holderName: string;
  origins: readonly string[];
  result?: CheckResult;
  record?: string;
  keyPages?: string;
  problem?: string;
}> = (props) => {
  const { result } = props;
  return (
    <Layout
      title={result === undefined ? "Check an agreement record" : titleOf(result)}
      holderName={props.holderName}
    >
      <h1>{result === undefined ? "Check an agreement record" : titleOf(result)}</h1>
      {result !== undefined && (
        <div class={result.ok ? "notice" : "alert"} role="status">
          <p>{result.summary}</p>
          {!result.ok && <p>{result.reason}</p>}
          {!result.ok && result.details.length > 0 && (
            <ul>
              {result.details.map((detail) => (
                <li>{detail}</li>
              ))}
            </ul>
          )}
          {result.ok && (
            <ul>
              {result.signatures.map((signature) => (
                <li>
                  The {signature.of} is signed by {signature.party} (key {signature.kid.slice(0, 12)}…,
                  vouched for by{" "}
                  {signature.vouchedBy === "dns"
                    ? "its domain's DNS record"
                    : `its listed ${signature.vouchedBy}`}
                  ).
                </li>
              ))}
              {result.keys === "as_supplied" && (
                <li>
                  The key pages are the ones given with the record: no trusted host vouched for them, so this
                  shows only that the record matches them. Get each signer's key page from its own host to be
                  sure.
                </li>
              )}
              {result.warnings.map((warning) => (
                <li>{warning}</li>
              ))}
            </ul>
          )}
        </div>
      )}
      <p class="lead">
        A record of what two agents agreed can be checked by anyone, without an account anywhere: the terms,
        the messages they come from and the signatures of both sides.
      </p>
      <CheckForm
        origins={props.origins}
        {...(props.record === undefined ? {} : { record: props.record })}
        {...(props.keyPages === undefined ? {} : { keyPages: props.keyPages })}
        {...(props.problem === undefined ? {} : { problem: props.problem })}
      />
    </Layout>
  );
};

interface CheckForm {
  readonly record: string;
  /** The key pages given, as typed (for the form) and parsed. */
  readonly keyPagesText: string;
  readonly keyPages: readonly unknown[];
}

/** Pages in a text: one JSON value (a page or an array of pages), or several values in a row. */
function pagesIn(text: string): unknown[] | undefined {
  const trimmed = text.trim();
  if (trimmed === "") return [];
  try {
    const value = JSON.parse(trimmed) as unknown;
    return Array.isArray(value) ? value : [value];
  } catch {
    // Several objects one after another ("{…}\n{…}"): read them as an array.
    try {
      const value = JSON.parse(`[${trimmed.replace(/\}\s*\{/g, "},{")}]`) as unknown[];
      return value;
    } catch {
      return undefined;
    }
  }
}

async function readForm(c: Context): Promise<CheckForm | { problem: string; status?: number }> {
  const body = await c.req.parseBody({ all: true });
  const one = (value: unknown) => (Array.isArray(value) ? value[0] : value);
  const file = one(body.file);
  let record: string;
  if (file instanceof File && file.size > 0) {
    if (file.size > MAX_RECORD_BYTES)
      return { problem: "The file is larger than 256 KB, the most a record may be.", status: 413 };
    record = new TextDecoder("utf-8", { fatal: false }).decode(await file.arrayBuffer());
  } else {
    const pasted = one(body.record);
    record = typeof pasted === "string" ? pasted.trim() : "";
    if (record === "") return { problem: "Paste a record or choose its file." };
    if (Buffer.byteLength(record, "utf8") > MAX_RECORD_BYTES) {
      return { problem: "The record is larger than 256 KB, the most a record may be.", status: 413 };
    }
  }
  const typed = one(body.keypages);
  const keyPagesText = typeof typed === "string" ? typed.trim() : "";
  const keyPages = pagesIn(keyPagesText);
  if (keyPages === undefined)
    return { problem: "The key pages are not JSON: paste each page as it was given." };
  const uploads = (Array.isArray(body.keypagefiles) ? body.keypagefiles : [body.keypagefiles]).filter(
    (f): f is File => f instanceof File && f.size > 0,
  );
  for (const upload of uploads) {
    if (upload.size > MAX_KEY_PAGE_BYTES) return { problem: `The key page ${upload.name} is too large.` };
    const pages = pagesIn(new TextDecoder("utf-8", { fatal: false }).decode(await upload.arrayBuffer()));
    if (pages === undefined) return { problem: `The key page ${upload.name} is not JSON.` };
    keyPages.push(...pages);
  }
  if (keyPages.length > MAX_KEY_PAGES) return { problem: `Give at most ${MAX_KEY_PAGES} key pages.` };
  return { record, keyPagesText, keyPages };
}

export function mountCheckPage<E extends Env, S extends Schema, B extends string>(
  app: Hono<E, S, B>,
  deps: { holderName: string; options?: CheckOptions },
): void {
  // No host is trusted unless the operator named one: the library's default host is not used here.
  const origins = deps.options?.trustedOrigins ?? [];
  const render = async (
    c: Context,
    status: number,
    props: Omit<Parameters<typeof CheckPage>[0], "holderName" | "origins">,
  ) =>
    c.html(
      `<!doctype html>${await (<CheckPage holderName={deps.holderName} origins={origins} {...props} />).toString()}`,
      status as 200,
    );
  const tooLarge = bodyLimit({
    maxSize: MAX_CHECK_FORM_BYTES,
    onError: (c) =>
      render(c, 413, { problem: "The record is larger than 256 KB, the most a record may be." }),
  }) as MiddlewareHandler;

  app.use(CHECK_PATH, pageHeaders as MiddlewareHandler<E>);
  app.get(CHECK_PATH, (c) => render(c, 200, {}));
  app.post(CHECK_PATH, tooLarge, async (c) => {
    let form: CheckForm | { problem: string; status?: number };
    try {
      form = await readForm(c);
    } catch {
      return render(c, 400, { problem: "The form could not be read; send it from this page." });
    }
    if ("problem" in form) return render(c, form.status ?? 400, { problem: form.problem });
    const shown = {
      record: form.record.length <= 64 * 1024 ? form.record : "",
      keyPages: form.keyPagesText.length <= 64 * 1024 ? form.keyPagesText : "",
    };
    let options: CheckOptions;
    if (form.keyPages.length > 0) {
      try {
        // The visitor's pages, trusted as given, and nothing fetched; no DNS either.
        options = { source: await staticKeyPages(form.keyPages), trustGivenPages: true, txt: async () => [] };
      } catch (error) {
        const reason = error instanceof Error ? error.message : "it does not validate";
        return render(c, 400, { ...shown, problem: `A key page is not valid: ${reason}.` });
      }
    } else if (origins.length > 0) {
      options = deps.options ?? {};
    } else {
      return render(c, 400, {
        ...shown,
        problem: "This holder trusts no key page host: give the key pages of the record's signers.",
      });
    }
    // checkRecord never throws for anything in the record: a bad one is "does not check out".
    const result = await checkRecord(form.record, options);
    return render(c, 200, { result, ...shown });
  });
  app.all(CHECK_PATH, async (c) => {
    const response = await render(c, 405, { problem: "Open this page in a browser and use its button." });
    response.headers.set("Allow", "GET, HEAD, POST");
    return response;
  });
}
