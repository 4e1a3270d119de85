import fs from "node:fs";

/** The kernel's clock ticks per second, which /proc/PID/stat and /proc/stat count in (USER_HZ: 100 on Linux). */
export const CLOCK_TICKS = 100;

/** User + system CPU seconds process `pid` has used (Linux /proc); throws once it is gone. */
export function processCpuSeconds(pid: number | undefined): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  // The fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}
