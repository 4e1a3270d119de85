import { promises as fs } from "node:fs";

export interface ReadPrivateFileOptions {
  /** The permission bits the file is set back to after reading, e.g. 0o600. */
  readonly mode: number;
}

/**
 * Reads a file that holds secrets as UTF-8: undefined when it does not exist, any other error
 * thrown as it came. A file others could read is then set back to `mode` (best effort).
 */
export const readPrivateFile = async (
  target: string,
  options: ReadPrivateFileOptions,
): Promise<string | undefined> => {
  let text: string;
  try {
    text = await fs.readFile(target, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  await fs.chmod(target, options.mode).catch(() => {});
  return text;
};
