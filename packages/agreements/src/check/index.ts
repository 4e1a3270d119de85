export { type CheckOptions, checkRecord } from "./check.js";
export {
  type CheckOutcome,
  type CheckResult,
  type CheckStep,
  RESULT_TITLES,
  type SignatureReport,
} from "./result.js";
