// The published JSON Schemas (draft 2020-12): the identifiers the profile names, compiled by a
// strict Ajv2020, and the currency list the code uses is exactly the schema's enum.
import { Ajv2020 } from "ajv/dist/2020.js";
import formats from "ajv-formats";
import { describe, expect, it } from "vitest";
import {
  CURRENCY_CODES,
  CURRENCY_MINOR_UNITS,
  keyPageSchema,
  MESSAGE_SCHEMA_ID,
  messageSchema,
  RECORD_SCHEMA_ID,
  recordSchema,
} from "../src/index.js";

describe("published schemas", () => {
  it("carry the profile's identifiers and draft 2020-12", () => {
    expect(messageSchema().$id).toBe(MESSAGE_SCHEMA_ID);
    expect(recordSchema().$id).toBe(RECORD_SCHEMA_ID);
    for (const schema of [messageSchema(), recordSchema(), keyPageSchema()]) {
      expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    }
  });

  it("compile under a fresh strict Ajv2020, as another implementation would use them", () => {
    const ajv = new Ajv2020({ strict: true, strictRequired: false });
    formats.default(ajv);
    for (const schema of [messageSchema(), recordSchema(), keyPageSchema()])
      expect(() => ajv.compile(schema)).not.toThrow();
  });

  it("list exactly the currencies the code knows minor units for", () => {
    const money = (messageSchema().$defs as Record<string, { properties: { currency: { enum: string[] } } }>)
      .money;
    expect(money?.properties.currency.enum).toEqual([...CURRENCY_CODES]);
    expect(CURRENCY_MINOR_UNITS).toMatchObject({ EUR: 2, JPY: 0, KWD: 3, CLF: 4, CZK: 2 });
    expect(CURRENCY_CODES).not.toContain("XAU");
  });

  it("bound every string in the message schema", () => {
    const unbounded: string[] = [];
    const walk = (node: unknown, path: string): void => {
      if (node === null || typeof node !== "object") return;
      const schema = node as Record<string, unknown>;
      if (schema.type === "string" && schema.maxLength === undefined && schema.pattern === undefined)
        unbounded.push(path);
      for (const [key, value] of Object.entries(schema)) walk(value, `${path}/${key}`);
    };
    walk(messageSchema(), "#");
    expect(unbounded).toEqual([]);
  });
});
