/**
 * The public agreement checker (agent-agreement/1, issue #7): anyone pastes or uploads a record
 * and reads which of the four results it gives, with the reason in plain words. No sign-in, no
 * state: nothing is stored, and the only requests the holder makes are for key pages on the
 * trusted hosts, through the SSRF-safe fetch of `@doorbell/agreements`.
 *
 *   GET  /check   the form (a text area and a file input)
 *   POST /check   the result (multipart or urlencoded; a record is at most 256 KB)
 */
import {
  type CheckOptions,
  type CheckResult,
  checkRecord,
  MAX_RECORD_BYTES,
  RESULT_TITLES,
} from "@doorbell/agreements";
import type { Context, Env, Hono, MiddlewareHandler, Schema } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { FC } from "hono/jsx";
import { Layout } from "./layout.js";
import { pageHeaders } from "./security.js";

export const CHECK_PATH = "/check";
/** A record (256 KB) plus the form's own bytes. */
const MAX_CHECK_FORM_BYTES = MAX_RECORD_BYTES + 16 * 1024;

const CheckForm: FC<{ record?: string; problem?: string }> = ({ record, problem }) => (
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
    <button type="submit">Check this record</button>
  </form>
);

const CheckPage: FC<{ holderName: string; result?: CheckResult; record?: string; problem?: string }> = (
  props,
) => {
  const { result } = props;
  return (
    <Layout
      title={result === undefined ? "Check an agreement record" : RESULT_TITLES[result.result]}
      holderName={props.holderName}
    >
      <h1>{result === undefined ? "Check an agreement record" : RESULT_TITLES[result.result]}</h1>
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
        {...(props.record === undefined ? {} : { record: props.record })}
        {...(props.problem === undefined ? {} : { problem: props.problem })}
      />
    </Layout>
  );
};

async function recordText(c: Context): Promise<string | { problem: string }> {
  const body = await c.req.parseBody();
  const file = body.file;
  if (file instanceof File && file.size > 0) {
    if (file.size > MAX_RECORD_BYTES)
      return { problem: "The file is larger than 256 KB, the most a record may be." };
    return new TextDecoder("utf-8", { fatal: false }).decode(await file.arrayBuffer());
  }
  const pasted = typeof body.record === "string" ? body.record.trim() : "";
  if (pasted === "") return { problem: "Paste a record or choose its file." };
  return pasted;
}

export function mountCheckPage<E extends Env, S extends Schema, B extends string>(
  app: Hono<E, S, B>,
  deps: { holderName: string; options?: CheckOptions },
): void {
  const render = async (
    c: Context,
    status: number,
    props: Omit<Parameters<typeof CheckPage>[0], "holderName">,
  ) =>
    c.html(
      `<!doctype html>${await (<CheckPage holderName={deps.holderName} {...props} />).toString()}`,
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
    let text: string | { problem: string };
    try {
      text = await recordText(c);
    } catch {
      return render(c, 400, { problem: "The form could not be read; send it from this page." });
    }
    if (typeof text !== "string") return render(c, 400, text);
    // checkRecord never throws for anything in the record: a bad one is "does not check out".
    const result = await checkRecord(text, deps.options ?? {});
    return render(c, 200, { result, record: text.length <= 64 * 1024 ? text : "" });
  });
  app.all(CHECK_PATH, async (c) => {
    const response = await render(c, 405, { problem: "Open this page in a browser and use its button." });
    response.headers.set("Allow", "GET, HEAD, POST");
    return response;
  });
}
