/**
 * Compares `expected` with the same-length run of `text` that starts at `offset`, without an early
 * exit, so the time taken does not depend on where they differ (the length is public: signatures
 * have a fixed length). Reading in place avoids slicing the header and the two Buffer copies that
 * `timingSafeEqual` would need on the hot verify path.
 */
export function constantTimeEqual(
  expected: string,
  text: string,
  offset = 0,
  length = text.length - offset,
): boolean {
  if (length !== expected.length) return false;
  let difference = 0;
  for (let i = 0; i < expected.length; i++)
    difference |= expected.charCodeAt(i) ^ text.charCodeAt(offset + i);
  return difference === 0;
}
