/**
 * Compares two ASCII strings (base64 or hex signatures) without an early exit, so the time taken
 * does not depend on where they differ. The length is public: signatures have a fixed length.
 * Used instead of `timingSafeEqual` on the hot verify path because it avoids two Buffer copies.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}
