/**
 * Log lines written together: a busy holder writes one access line per request, and a write to
 * stderr (a pipe to the service manager, usually) is a system call each. Lines wait here at most
 * `delayMs` or until `maxBytes` have gathered, then go in one write; whatever waits is written
 * before the process exits (also on an uncaught error). Only a process killed outright (SIGKILL)
 * loses the last few milliseconds of lines.
 */
export function bufferedLines(
  write: (text: string) => void,
  options: { delayMs?: number; maxBytes?: number } = {},
): (line: string) => void {
  const delayMs = options.delayMs ?? 25;
  const maxBytes = options.maxBytes ?? 64 * 1024;
  let waiting: string[] = [];
  let size = 0;
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (waiting.length === 0) return;
    const text = waiting.join("");
    waiting = [];
    size = 0;
    write(text);
  };
  process.once("exit", flush);
  return (line) => {
    waiting.push(line);
    size += line.length;
    if (size >= maxBytes) flush();
    else if (timer === undefined) timer = setTimeout(flush, delayMs).unref();
  };
}
