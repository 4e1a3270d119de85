import { randomBytes } from "node:crypto";
import { constants, promises as fs } from "node:fs";

export interface WriteFileAtomicallyOptions {
  /** The new file's permission bits, e.g. 0o600 for a file that holds secrets. */
  readonly mode: number;
}

/**
 * Writes `text` to a new file beside `target` (created exclusively with `mode`), fsyncs it and
 * renames it over `target`, so a crash leaves either the old file or the new one, never half.
 * On failure the temporary file is removed and the error is thrown as it came.
 */
export const writeFileAtomically = async (
  target: string,
  text: string,
  options: WriteFileAtomicallyOptions,
): Promise<void> => {
  const temporary = `${target}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    const handle = await fs.open(
      temporary,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL,
      options.mode,
    );
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(temporary, target);
  } catch (error) {
    await fs.rm(temporary, { force: true }).catch(() => {});
    throw error;
  }
};
