/**
 * Whether two JSON values have the same RFC 8785 form, without writing either: the same members
 * (in any order) with the same values, arrays element by element, strings code unit for code unit,
 * numbers by value (-0 and 0 are both written 0). For values already known to be JSON data.
 */
export const sameJsonData = (a: unknown, b: unknown): boolean => {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJsonData(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const names = Object.keys(a);
  if (names.length !== Object.keys(b).length) return false;
  for (const name of names) {
    if (!Object.hasOwn(b, name)) return false;
    if (!sameJsonData((a as Record<string, unknown>)[name], (b as Record<string, unknown>)[name]))
      return false;
  }
  return true;
};
