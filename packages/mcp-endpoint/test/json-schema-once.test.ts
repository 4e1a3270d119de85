/**
 * The modern endpoint builds a server per request, and the SDK converts a tool's schemas to JSON
 * Schema per server: `jsonSchemaOnce` makes each schema's conversion happen once per process (it was
 * 11 % of a serve process's CPU in the soak). The answer is the SDK's own conversion, unchanged and
 * frozen; a tools/list from two requests carries equal schemas.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { jsonSchemaOnce } from "../src/json-schema-once.js";

const TARGET = { target: "draft-2020-12" };

describe("jsonSchemaOnce", () => {
  it("converts a schema once per direction and target, and answers the same frozen JSON after", () => {
    const plain = z.object({ intentCode: z.string().min(8), since: z.string().optional() });
    const expected = {
      input: plain["~standard"].jsonSchema.input(TARGET),
      output: plain["~standard"].jsonSchema.output(TARGET),
    };
    const schema = jsonSchemaOnce(z.object({ intentCode: z.string().min(8), since: z.string().optional() }));
    const first = schema["~standard"].jsonSchema.input(TARGET);
    const again = schema["~standard"].jsonSchema.input(TARGET);
    expect(again).toBe(first);
    expect(first).toEqual(expected.input);
    expect(schema["~standard"].jsonSchema.output(TARGET)).toEqual(expected.output);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen((first as { properties: object }).properties)).toBe(true);
    expect(() => {
      (first as { type: string }).type = "array";
    }).toThrow(TypeError);
    // Validation is untouched: it is still the schema's own.
    expect(schema.safeParse({ intentCode: "short" }).success).toBe(false);
    expect(schema.safeParse({ intentCode: "long enough" }).success).toBe(true);
    expect(jsonSchemaOnce(schema)).toBe(schema);
  });

  it("converts once however many times it is asked", () => {
    const schema = z.object({ n: z.number() });
    const standard = schema["~standard"];
    let conversions = 0;
    const convert = standard.jsonSchema.input;
    Object.defineProperty(schema, "~standard", {
      value: {
        ...standard,
        jsonSchema: {
          ...standard.jsonSchema,
          input: (options: { target: string }) => {
            conversions++;
            return convert(options);
          },
        },
      },
      configurable: true,
    });
    const once = jsonSchemaOnce(schema);
    for (let i = 0; i < 5; i++) once["~standard"].jsonSchema.input(TARGET);
    expect(conversions).toBe(1);
    once["~standard"].jsonSchema.input({ target: "draft-07" });
    expect(conversions).toBe(2);
  });
});
