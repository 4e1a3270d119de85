export { type CheckOptions, checkRecord } from "./check.js";
export {
  type CheckOutcome,
  type CheckResult,
  type CheckStep,
  KEYS_AS_SUPPLIED,
  RESULT_TITLES,
  type SignatureReport,
  verdictTitle,
} from "./result.js";
