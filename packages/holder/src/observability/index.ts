// Metrics, the access log and the log format.
export {
  type AccessLogger,
  createAccessLogger,
  redactPath,
  redactQuery,
} from "./access-log.js";
export {
  chooseLogFormat,
  createHolderLogger,
  LOG_FORMAT_ENV,
  type LogFormat,
  type LogLevel,
  prettyLine,
} from "./log-format.js";
export { createHolderMetrics, type HolderMetrics } from "./metrics.js";
export { METRICS_PATH, type MetricsOptions, metricsExposureProblem, mountMetrics } from "./metrics-route.js";
