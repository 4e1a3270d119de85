import { StoreError } from "@doorbell/store";
import { TEST_PG_URL_ENV, testEngines } from "@doorbell/store/testing";
import { describe, expect, it } from "vitest";

describe("testEngines", () => {
  it("skips PostgreSQL with a printed notice when the URL is unset outside CI", () => {
    const notices: string[] = [];
    const engines = testEngines({ env: {}, log: (m) => notices.push(m) });
    expect(engines.map((e) => e.dialect)).toEqual(["sqlite", "postgres"]);
    expect(engines[0]?.skipReason).toBeUndefined();
    expect(engines[1]?.skipReason).toContain(TEST_PG_URL_ENV);
    expect(notices.join("\n")).toContain("SKIPPED");
  });

  it("fails under CI when the URL is unset", () => {
    for (const ci of ["true", "1", "yes"]) {
      expect(() => testEngines({ env: { CI: ci }, log: () => {} })).toThrow(StoreError);
      expect(() => testEngines({ env: { CI: ci }, log: () => {} })).toThrow(TEST_PG_URL_ENV);
    }
    expect(testEngines({ env: { CI: "false" }, log: () => {} })[1]?.skipReason).toBeDefined();
  });

  it("runs PostgreSQL when the URL is set", () => {
    const engines = testEngines({
      env: { [TEST_PG_URL_ENV]: "postgres://u:p@127.0.0.1:5432/postgres", CI: "1" },
    });
    expect(engines[1]?.skipReason).toBeUndefined();
  });

  it("refuses to create a PostgreSQL database when skipped", async () => {
    const pg = testEngines({ env: {}, log: () => {} })[1];
    await expect(pg?.createDatabase()).rejects.toMatchObject({ code: "ERR_STORE_TEST_SETUP" });
  });
});
