import { describe, expect, it } from "vitest";
import { CodedError, isCodedError } from "../src/index.js";

class ExampleError extends CodedError<"ERR_EXAMPLE_A" | "ERR_EXAMPLE_B"> {
  override readonly name = "ExampleError";
}

describe("a coded error", () => {
  it("carries its code, message, name and cause", () => {
    const cause = new Error("below");
    const error = new ExampleError("ERR_EXAMPLE_A", "plain words", { cause });
    expect(error).toBeInstanceOf(ExampleError);
    expect(error).toBeInstanceOf(CodedError);
    expect(error).toBeInstanceOf(Error);
    expect(error.code).toBe("ERR_EXAMPLE_A");
    expect(error.message).toBe("plain words");
    expect(error.name).toBe("ExampleError");
    expect(error.cause).toBe(cause);
    expect(String(error)).toBe("ExampleError: plain words");
  });

  it("has no own cause when none is given", () => {
    expect(Object.hasOwn(new ExampleError("ERR_EXAMPLE_B", "x"), "cause")).toBe(false);
  });

  it("is recognised by code, and other errors are not", () => {
    const error = new ExampleError("ERR_EXAMPLE_B", "x");
    expect(isCodedError(error)).toBe(true);
    expect(isCodedError(error, "ERR_EXAMPLE_A", "ERR_EXAMPLE_B")).toBe(true);
    expect(isCodedError(error, "ERR_EXAMPLE_A")).toBe(false);
    expect(isCodedError(new Error("x"))).toBe(false);
    expect(isCodedError(Object.assign(new Error("x"), { code: "ERR_EXAMPLE_A" }))).toBe(false);
  });
});
