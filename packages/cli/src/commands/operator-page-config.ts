import { type Io, UsageError } from "../io.js";
import { ENV } from "./holder-config.js";

const ON = new Set(["1", "true", "on", "yes"]);
const OFF = new Set(["0", "false", "off", "no"]);

/**
 * Whether `doorbell serve` serves the operator page: `--operator-page`, else DOORBELL_OPERATOR_PAGE
 * (on/off, true/false, 1/0, yes/no); off by default. Its token is the metrics token.
 */
export function operatorPageSetting(values: { "operator-page"?: boolean | undefined }, io: Io): boolean {
  if (values["operator-page"] === true) return true;
  const text = io.env[ENV.operatorPage]?.trim().toLowerCase();
  if (text === undefined || text === "") return false;
  if (ON.has(text)) return true;
  if (OFF.has(text)) return false;
  throw new UsageError(`${ENV.operatorPage} is on or off, not ${JSON.stringify(io.env[ENV.operatorPage])}`);
}
