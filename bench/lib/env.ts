/** Settings of the bench from the environment. */

/** A whole number from `name` (underscores allowed as separators), `fallback` when unset; refused outside [min, max]. */
export function intEnv(name: string, fallback: number, min = 1, max = Infinity): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw.replace(/_/g, ''));
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new Error(`${name} must be a whole number ${max === Infinity ? `≥ ${min}` : `from ${min} to ${max}`}, got "${raw}"`);
  }
  return n;
}
