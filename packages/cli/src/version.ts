import { readFileSync } from "node:fs";

let version: string | undefined;

/** The version in this package's package.json (src/ and dist/ both sit beside it). */
export function cliVersion(): string {
  version ??= (
    JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
  ).version;
  return version;
}
