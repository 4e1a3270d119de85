/**
 * JSON catalogue offers through stream-json's tokenizer, streamed: the text is fed a line at a
 * time (long lines in pieces), so each offer's first token is known to be on the line just fed,
 * and only one offer is assembled at a time. A syntax error ends the reading (JSON cannot be
 * resynchronised), reported at its line; problems in offers that parsed are all reported.
 */
import { Assembler } from "stream-json/assembler.js";
import { jsonParser, type Token } from "stream-json/core/parser.js";
import type { Entry, Problems } from "./catalogue-entries.js";
import { nestJsonOffer } from "./catalogue-fields.js";

/** stream-chain's "no value" marker: fed to the tokenizer, it flushes the end of the text. */
const none: unique symbol = Symbol.for("object-stream.none") as never;

/** The most text fed to the tokenizer at once: a minified file is one long line. */
const PIECE = 64 * 1024;

/** Splits text chunks into pieces that end at a line break or after PIECE characters. */
async function* pieces(text: AsyncIterable<string>): AsyncGenerator<string> {
  let carry = "";
  for await (const chunk of text) {
    carry += chunk;
    let start = 0;
    for (;;) {
      const newline = carry.indexOf("\n", start);
      if (newline >= 0 && newline - start < PIECE) {
        yield carry.slice(start, newline + 1);
        start = newline + 1;
      } else if (carry.length - start >= PIECE) {
        yield carry.slice(start, start + PIECE);
        start += PIECE;
      } else break;
    }
    carry = carry.slice(start);
  }
  if (carry !== "") yield carry;
}

const tokensOf = (result: unknown): readonly Token[] => {
  if (result === none || result === undefined) return [];
  const many = result as { values?: Token[] };
  return many.values ?? [result as Token];
};

export async function* jsonEntries(text: AsyncIterable<string>, problems: Problems): AsyncGenerator<Entry> {
  const tokenize = jsonParser({ packValues: true, streamValues: false });
  let line = 1;
  /** 0 before the array, 1 inside it, more inside an offer. */
  let depth = 0;
  let started = false;
  let closed = false;
  let index = 0;
  let offer: { assembler: Assembler; line: number } | undefined;
  const done: Entry[] = [];

  const finish = (value: unknown, at: number) => {
    const nested: string[] = [];
    const shaped = nestJsonOffer(value, nested);
    for (const message of nested) problems.add(at, message);
    if (nested.length === 0) done.push({ line: at, value: shaped, rename: (m) => m });
  };

  /** False when the text is not a catalogue array: reading stops. */
  const take = (token: Token): boolean => {
    if (!started) {
      if (token.name !== "startArray") {
        problems.add(line, "a JSON catalogue is an array of offers: it must start with [");
        return false;
      }
      started = true;
      depth = 1;
      return true;
    }
    if (closed) {
      problems.add(line, "unexpected text after the closing ] of the array");
      return false;
    }
    if (depth === 1) {
      if (token.name === "endArray") {
        closed = true;
        depth = 0;
        return true;
      }
      index++;
      if (token.name === "startObject" || token.name === "startArray") {
        offer = { assembler: new Assembler(), line };
        offer.assembler.consume(token);
        depth++;
      } else {
        // A bare string, number, true, false or null where an offer should be.
        const value =
          token.name === "numberValue" ? Number(token.value) : "value" in token ? token.value : null;
        finish(value, line);
      }
      return true;
    }
    offer?.assembler.consume(token);
    if (token.name === "startObject" || token.name === "startArray") depth++;
    else if (token.name === "endObject" || token.name === "endArray") {
      depth--;
      if (depth === 1 && offer !== undefined) {
        finish(offer.assembler.current, offer.line);
        offer = undefined;
      }
    }
    return true;
  };

  const feed = (piece: string | typeof none): boolean => {
    let tokens: readonly Token[];
    try {
      tokens = tokensOf(tokenize(piece as string));
    } catch (error) {
      syntaxProblem(error, piece === none);
      return false;
    }
    for (const token of tokens) if (!take(token)) return false;
    return true;
  };

  const syntaxProblem = (error: unknown, atEnd: boolean) => {
    const reason = error instanceof Error ? error.message.replace(/^Parser cannot parse input: /, "") : "";
    if (!started) problems.add(line, "a JSON catalogue is an array of offers: it must start with [");
    else if (closed) problems.add(line, "unexpected text after the closing ] of the array");
    else if (atEnd) problems.add(line, "the array is not closed: a ] is missing at the end");
    else if (depth === 1 && offer === undefined) {
      problems.add(
        line,
        reason === "expected a value"
          ? `offer ${index + 1}: a value is missing (two commas in a row, or a comma before ])`
          : `offer ${index + 1} is not valid JSON: ${reason}`,
      );
    } else problems.add(line, `offer ${index} is not valid JSON: ${reason}`);
  };

  for await (const piece of pieces(text)) {
    const ok = feed(piece);
    yield* done.splice(0);
    if (!ok) return;
    if (piece.endsWith("\n")) line++;
  }
  if (!feed(none)) return;
  yield* done.splice(0);
  if (!started) problems.add(line, "a JSON catalogue is an array of offers: it must start with [");
  else if (!closed) problems.add(line, "the array is not closed: a ] is missing at the end");
}
