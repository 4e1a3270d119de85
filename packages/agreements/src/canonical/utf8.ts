import { isAscii } from "node:buffer";

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Texts up to this many bytes are decoded in one call; longer ones run by run. */
const BLOCK = 1024;

const isContinuation = (byte: number): boolean => (byte & 0xc0) === 0x80;

/**
 * The text of UTF-8 bytes, or undefined when they are not valid UTF-8 (a byte order mark is kept,
 * not dropped). A record is mostly ASCII (JWS strings) with a few other characters (a name, a
 * "×"), and Node 20 decodes a whole text slowly once it holds any non-ASCII byte. So the bytes are
 * read in blocks of about 1 KiB, each cut before a byte that starts a character: runs of ASCII
 * blocks are copied as Latin-1 (the same characters), and only the runs of other blocks go through
 * the strict decoder. UTF-8 is self-synchronising: cut before a byte that starts a character, the
 * whole is valid exactly when every run is, and decodes to the runs' texts end to end.
 */
export const utf8Text = (bytes: Uint8Array): string | undefined => {
  try {
    return decodeStrict(bytes);
  } catch {
    return undefined;
  }
};

const decodeStrict = (bytes: Uint8Array): string => {
  const length = bytes.byteLength;
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, length);
  if (isAscii(buffer)) return buffer.toString("latin1");
  if (length <= BLOCK) return decoder.decode(buffer);
  let text = "";
  let runStart = 0;
  let runAscii = true;
  for (let start = 0; start < length; ) {
    let end = Math.min(start + BLOCK, length);
    while (end < length && isContinuation(buffer[end] as number)) end++;
    const ascii = isAscii(buffer.subarray(start, end));
    if (ascii !== runAscii && start > runStart) {
      text += readRun(buffer, runStart, start, runAscii);
      runStart = start;
    }
    runAscii = ascii;
    start = end;
  }
  return text + readRun(buffer, runStart, length, runAscii);
};

const readRun = (buffer: Buffer, start: number, end: number, ascii: boolean): string =>
  ascii ? buffer.toString("latin1", start, end) : decoder.decode(buffer.subarray(start, end));
