/**
 * Runs `work` for every item, at most `limit` at a time (e.g. one per kept SMTP connection). A
 * failure does not stop the others; the first one is thrown once all have run.
 */
export async function atMostAtOnce<T>(
  limit: number,
  items: Iterable<T>,
  work: (item: T) => Promise<unknown>,
): Promise<void> {
  const queue = [...items];
  const failures: unknown[] = [];
  const worker = async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
      await work(item).catch((error: unknown) => failures.push(error));
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, queue.length) }, worker));
  if (failures.length > 0) throw failures[0];
}
