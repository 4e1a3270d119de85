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
 *
 * In the language the request negotiates, like the other pages. What the checker finds wrong with
 * a record (its reason, details and warnings) comes from `@doorbell/agreements` in English: the
 * page says at which step it failed in the page's language, and marks those words `lang="en"`.
 */
import {
  type CheckOptions,
  type CheckResult,
  checkRecord,
  MAX_KEY_PAGE_BYTES,
  MAX_RECORD_BYTES,
  staticKeyPages,
} from "@doorbell/agreements";
import type { Context, Env, Hono, MiddlewareHandler, Schema } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { FC } from "hono/jsx";
import { Layout } from "../../html/layout.js";
import { pageHeaders } from "../../html/security.js";
import { type Messages, messagesFor } from "../../i18n/messages/index.js";
import { requestLanguage } from "../../i18n/request-language.js";
import type { Lang } from "../../model/languages.js";

export const CHECK_PATH = "/check";
/** At most this many key pages with one record (two parties sign; a few spares). */
const MAX_KEY_PAGES = 8;
/** A record (256 KB), its key pages, and the form's own bytes. */
const MAX_CHECK_FORM_BYTES = MAX_RECORD_BYTES + 2 * MAX_KEY_PAGE_BYTES + 16 * 1024;

type Words = Messages["check"];

/** The verdict as a person should read it: where the keys came from is part of it. */
const titleOf = (t: Words, result: CheckResult): string => {
  const verdict = t.verdicts[result.result] ?? result.result;
  return result.ok && result.keys === "as_supplied" ? t.keysAsSupplied(verdict) : verdict;
};

/** Which hosts this page trusts, in words for the page. */
const TrustNote: FC<{ t: Words; origins: readonly string[] }> = ({ t, origins }) => (
  <p class="hint" id="trust">
    {origins.length === 0 ? t.trustsNone : t.trustsOrigins(origins.join(", "))}
  </p>
);

/** The checker's own words (English), marked so on a page in another language. */
const englishOf = (lang: Lang) => (lang === "en" ? {} : { lang: "en" });

const CheckForm: FC<{
  t: Words;
  record?: string;
  keyPages?: string;
  problem?: string;
  origins: readonly string[];
}> = ({ t, record, keyPages, problem, origins }) => (
  <form method="post" action={CHECK_PATH} enctype="multipart/form-data">
    {problem !== undefined && (
      <div class="alert" role="alert">
        <p>{problem}</p>
      </div>
    )}
    <div class="field">
      <label for="record">{t.recordLabel}</label>
      <span class="hint" id="record-hint">
        {t.recordHint}
      </span>
      <textarea id="record" name="record" rows={12} aria-describedby="record-hint" spellcheck={false}>
        {record ?? ""}
      </textarea>
    </div>
    <div class="field">
      <label for="file">{t.fileLabel}</label>
      <input type="file" id="file" name="file" accept="application/json,.json" />
    </div>
    <div class="field">
      <label for="keypages">{t.keyPagesLabel}</label>
      <span class="hint" id="keypages-hint">
        {t.keyPagesHint}
      </span>
      <TrustNote t={t} origins={origins} />
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
      <label for="keypagefiles">{t.keyPageFilesLabel}</label>
      <input type="file" id="keypagefiles" name="keypagefiles" accept="application/json,.json" multiple />
    </div>
    <button type="submit">{t.submit}</button>
  </form>
);

/** What the checker found: the verdict's words, each signature, and for a failure where and why. */
const Findings: FC<{ t: Words; lang: Lang; result: CheckResult }> = ({ t, lang, result }) => {
  const english = englishOf(lang);
  if (!result.ok) {
    return (
      <div class="alert" role="status">
        {lang === "en" ? (
          <p>{result.summary}</p>
        ) : (
          <p>{t.failedAt(result.step, t.steps[result.step] ?? String(result.step))}</p>
        )}
        <p {...english}>{result.reason}</p>
        {result.details.length > 0 && (
          <ul {...english}>
            {result.details.map((detail) => (
              <li>{detail}</li>
            ))}
          </ul>
        )}
      </div>
    );
  }
  return (
    <div class="notice" role="status">
      {/* The summary restates the verdict and the signers: the lines below say it in any language. */}
      {lang === "en" && <p>{result.summary}</p>}
      <ul>
        {result.signatures.map((signature) => (
          <li>
            {t.signed[signature.of](
              signature.party,
              signature.kid.slice(0, 12),
              t.vouchers[signature.vouchedBy] ?? signature.vouchedBy,
            )}
          </li>
        ))}
        {result.keys === "as_supplied" && <li>{t.keysSupplied}</li>}
        {result.warnings.map((warning) => (
          <li {...english}>{warning}</li>
        ))}
      </ul>
    </div>
  );
};

const CheckPage: FC<{
  holderName: string;
  lang: Lang;
  /** The empty form offers the language switch; a result or a refusal is not shown again by a GET. */
  langSwitch?: boolean;
  origins: readonly string[];
  result?: CheckResult;
  record?: string;
  keyPages?: string;
  problem?: string;
}> = (props) => {
  const { result, lang } = props;
  const t = messagesFor(lang).check;
  const title = result === undefined ? t.title : titleOf(t, result);
  return (
    <Layout title={title} holderName={props.holderName} lang={lang} langSwitch={props.langSwitch === true}>
      <h1>{title}</h1>
      {result !== undefined && <Findings t={t} lang={lang} result={result} />}
      <p class="lead">{t.lead}</p>
      <CheckForm
        t={t}
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

async function readForm(c: Context, t: Words): Promise<CheckForm | { problem: string; status?: number }> {
  const body = await c.req.parseBody({ all: true });
  const one = (value: unknown) => (Array.isArray(value) ? value[0] : value);
  const file = one(body.file);
  let record: string;
  if (file instanceof File && file.size > 0) {
    if (file.size > MAX_RECORD_BYTES) return { problem: t.problems.fileTooLarge, status: 413 };
    record = new TextDecoder("utf-8", { fatal: false }).decode(await file.arrayBuffer());
  } else {
    const pasted = one(body.record);
    record = typeof pasted === "string" ? pasted.trim() : "";
    if (record === "") return { problem: t.problems.noRecord };
    if (Buffer.byteLength(record, "utf8") > MAX_RECORD_BYTES) {
      return { problem: t.problems.recordTooLarge, status: 413 };
    }
  }
  const typed = one(body.keypages);
  const keyPagesText = typeof typed === "string" ? typed.trim() : "";
  const keyPages = pagesIn(keyPagesText);
  if (keyPages === undefined) return { problem: t.problems.keyPagesNotJson };
  const uploads = (Array.isArray(body.keypagefiles) ? body.keypagefiles : [body.keypagefiles]).filter(
    (f): f is File => f instanceof File && f.size > 0,
  );
  for (const upload of uploads) {
    if (upload.size > MAX_KEY_PAGE_BYTES) return { problem: t.problems.keyPageTooLarge(upload.name) };
    const pages = pagesIn(new TextDecoder("utf-8", { fatal: false }).decode(await upload.arrayBuffer()));
    if (pages === undefined) return { problem: t.problems.keyPageNotJson(upload.name) };
    keyPages.push(...pages);
  }
  if (keyPages.length > MAX_KEY_PAGES) return { problem: t.problems.tooManyKeyPages(MAX_KEY_PAGES) };
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
    props: Omit<Parameters<typeof CheckPage>[0], "holderName" | "origins" | "lang">,
    lang: Lang = requestLanguage(c),
  ) =>
    c.html(
      `<!doctype html>${await (<CheckPage holderName={deps.holderName} origins={origins} lang={lang} {...props} />).toString()}`,
      status as 200,
    );
  const wordsOf = (c: Context) => {
    const lang = requestLanguage(c);
    return { lang, t: messagesFor(lang).check };
  };
  const tooLarge = bodyLimit({
    maxSize: MAX_CHECK_FORM_BYTES,
    onError: (c) => {
      const { lang, t } = wordsOf(c);
      return render(c, 413, { problem: t.problems.recordTooLarge }, lang);
    },
  }) as MiddlewareHandler;

  app.use(CHECK_PATH, pageHeaders as MiddlewareHandler<E>);
  app.get(CHECK_PATH, (c) => render(c, 200, { langSwitch: true }));
  app.post(CHECK_PATH, tooLarge, async (c) => {
    const { lang, t } = wordsOf(c);
    let form: CheckForm | { problem: string; status?: number };
    try {
      form = await readForm(c, t);
    } catch {
      return render(c, 400, { problem: t.problems.unreadable }, lang);
    }
    if ("problem" in form) return render(c, form.status ?? 400, { problem: form.problem }, lang);
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
        return render(c, 400, { ...shown, problem: t.problems.keyPageInvalid(reason) }, lang);
      }
    } else if (origins.length > 0) {
      options = deps.options ?? {};
    } else {
      return render(c, 400, { ...shown, problem: t.problems.noTrustedHost }, lang);
    }
    // checkRecord never throws for anything in the record: a bad one is "does not check out".
    const result = await checkRecord(form.record, options);
    return render(c, 200, { result, ...shown }, lang);
  });
  app.all(CHECK_PATH, async (c) => {
    const { lang, t } = wordsOf(c);
    const response = await render(c, 405, { problem: t.problems.notForm }, lang);
    response.headers.set("Allow", "GET, HEAD, POST");
    return response;
  });
}
