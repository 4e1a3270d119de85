/**
 * Reads at most `limit` bytes of a response body, then stops: leaving the loop destroys the
 * stream, which closes the connection, so a hostile endpoint cannot make us buffer or even
 * download megabytes. A body that fails midway keeps what arrived and counts as truncated.
 */
export const readCapped = async (
  body: AsyncIterable<Uint8Array>,
  limit: number,
): Promise<{ bytes: Uint8Array; truncated: boolean }> => {
  const bytes = new Uint8Array(limit);
  let length = 0;
  let truncated = false;
  try {
    for await (const chunk of body) {
      const room = limit - length;
      if (chunk.byteLength > room) {
        bytes.set(chunk.subarray(0, room), length);
        length = limit;
        truncated = true;
        break;
      }
      bytes.set(chunk, length);
      length += chunk.byteLength;
    }
  } catch {
    truncated = true;
  }
  return { bytes: bytes.slice(0, length), truncated };
};
