/** Sizes and counts of the suites, from the environment (see the header of bench/run.ts). */

/** A whole number from the environment variable `name` (underscores allowed: 1_000_000), or `fallback`. */
export function intEnv(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw.replace(/_/g, ''));
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be a whole number ≥ ${min}, got "${raw}"`);
  return n;
}
