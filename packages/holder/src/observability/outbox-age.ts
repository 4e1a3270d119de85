/**
 * The age of the oldest doorbell still waiting, from when it was queued, so a doorbell waiting
 * hours for its next retry counts as old. The delivery engine reads its own tables.
 */
export { oldestPendingAgeMs } from "@doorbell/delivery";
