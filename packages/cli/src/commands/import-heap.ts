import v8 from "node:v8";
import { runInNewContext } from "node:vm";

/**
 * How far V8 lets the heap grow past what the last full collection kept, for a catalogue import.
 * An import keeps nothing per offer, but each batch it writes lives across
 * database round trips, so its garbage is promoted to the old generation; by default V8 lets that
 * grow to about four times the live heap before collecting it (a 100 MB CSV peaked at 492 MB RSS
 * while the live heap stayed near 60 MB). 30 % keeps the peak near the live heap, at the price of
 * more frequent full collections, which an import that waits on its database hardly notices.
 */
export const IMPORT_HEAP_GROWING_PERCENT = 30;

const GROWING_FLAG = "--heap-growing-percent";

/**
 * Applies IMPORT_HEAP_GROWING_PERCENT to this process (the import is all it does), unless its own
 * command line or NODE_OPTIONS already chose a value. Returns the value in force, if ours.
 */
export function boundImportHeap(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string | undefined = process.env.NODE_OPTIONS,
): number | undefined {
  const given = [...execArgv, ...(nodeOptions ?? "").split(/\s+/)].some(
    (arg) =>
      arg === GROWING_FLAG || arg.startsWith(`${GROWING_FLAG}=`) || arg.startsWith("--heap_growing_percent"),
  );
  if (given) return undefined;
  v8.setFlagsFromString(`${GROWING_FLAG}=${IMPORT_HEAP_GROWING_PERCENT}`);
  // V8 applies the factor when a full collection sets the next limit; the limit set while the
  // program loaded still allows about 4×, so collect once now (gc, exposed for this one call).
  v8.setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  v8.setFlagsFromString("--no-expose-gc");
  gc();
  return IMPORT_HEAP_GROWING_PERCENT;
}
