// Issue #17: the access log's redaction of code-bearing paths and query values, and the two log
// formats (JSON in production, a readable line at a terminal) made from the same pino record.
import { describe, expect, it } from "vitest";
import { redactPath, redactQuery } from "../../src/observability/access-log.js";
import { chooseLogFormat, createHolderLogger, prettyLine } from "../../src/observability/log-format.js";

const TOKEN = "Zq3xR8vT1nW5yB7kL0pD2fH4";

describe("access-log redaction", () => {
  it.each([
    [`/consent/${TOKEN}`, "/consent/:token"],
    [`/confirm/${TOKEN}`, "/confirm/:token"],
    [`/manage/${TOKEN}`, "/manage/:token"],
    [`/manage/${TOKEN}/withdraw`, "/manage/:token/withdraw"],
    [`/manage/${TOKEN}/notifications/sub_abc/allow`, "/manage/:token/notifications/:id/allow"],
    [`/manage/${TOKEN}/assistants/g1/revoke`, "/manage/:token/assistants/:grant/revoke"],
    [`/notifications/${TOKEN}`, "/notifications/:token"],
    [`/notifications/${TOKEN}/stop`, "/notifications/:token/stop"],
    [`/manage/${TOKEN}/something/else`, "/manage/:token/…"],
    [`/signin/uid123/link/${TOKEN}`, "/signin/:uid/link/:token"],
    [`/dev/mailbox/${TOKEN}`, "/dev/mailbox/:id"],
    ["/mcp", "/mcp"],
    ["/metrics", "/metrics"],
    ["/.well-known/isto-intents.json", "/.well-known/isto-intents.json"],
    // Unknown paths: short plain words stay, anything token- or address-like goes.
    [`/x/${TOKEN}`, "/x/:redacted"],
    ["/x/Canary.Person@Example.SK", "/x/:redacted"],
    ["/x/%69c_abc", "/x/:redacted"],
    ["/oauth/token", "/oauth/token"],
  ])("%s is logged as %s", (path, shown) => {
    expect(redactPath(path)).toBe(shown);
  });

  it("drops query values and keeps at most ten names", () => {
    expect(redactQuery(`?code=${TOKEN}&state=abc`)).toBe("?code=*&state=*");
    expect(redactQuery("")).toBe("");
    expect(redactQuery("?<script>=1")).toBe("?script=*");
    const many = Array.from({ length: 20 }, (_, i) => `k${i}=v`).join("&");
    expect(redactQuery(`?${many}`).split("&")).toHaveLength(10);
  });
});

describe("log formats", () => {
  it("chooses JSON in production and off a terminal, readable at a terminal, and obeys DOORBELL_LOG_FORMAT", () => {
    expect(chooseLogFormat({}, true)).toBe("pretty");
    expect(chooseLogFormat({}, false)).toBe("json");
    expect(chooseLogFormat({ NODE_ENV: "production" }, true)).toBe("json");
    expect(chooseLogFormat({ DOORBELL_LOG_FORMAT: "pretty", NODE_ENV: "production" }, false)).toBe("pretty");
    expect(() => chooseLogFormat({ DOORBELL_LOG_FORMAT: "xml" }, true)).toThrow(/pretty or json, not "xml"/);
  });

  it("writes the same record as one JSON object or one readable line", () => {
    const json: string[] = [];
    const pretty: string[] = [];
    for (const [format, lines] of [
      ["json", json],
      ["pretty", pretty],
    ] as const) {
      const log = createHolderLogger({ level: "info", format, write: (line) => lines.push(line) });
      log
        .child({ component: "http" })
        .info(
          { event: "http.request", method: "GET", path: "/consent/:token", status: 200, ms: 3.1 },
          "GET /consent/:token 200 3.1 ms",
        );
      log
        .child({ component: "delivery" })
        .warn(
          { subscription: "sub_1", category: "http_5xx", status: 503, attempt: 2, note: "two words" },
          "delivery attempt failed",
        );
      log.debug("not at info");
    }
    expect(json).toHaveLength(2);
    expect(JSON.parse(json[0] as string)).toMatchObject({ level: 30, component: "http", status: 200 });
    expect(pretty[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}http {6}GET \/consent\/:token 200 3\.1 ms\n$/);
    expect(pretty[1]).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} WARN {2}delivery {2}delivery attempt failed {2}subscription=sub_1 category=http_5xx status=503 attempt=2 note="two words"\n$/,
    );
    expect(prettyLine("not json\n")).toBe("not json\n");
  });
});
