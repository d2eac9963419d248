// Merges the conformance proxy's reports (one per SDK test harness, written under STRATA_CONFORM) into one
// table: each operation exercised, its calls and statuses, and every difference from the reference.
// Exit status 1 when any exercised operation does not conform.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2] ?? '.conform';
const ops = new Map();
const unknown = new Set();
for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
  const report = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  for (const o of report.operations) {
    const seen = ops.get(o.operation) ?? { calls: 0, statuses: {}, problems: new Set() };
    seen.calls += o.calls;
    for (const [s, n] of Object.entries(o.statuses)) seen.statuses[s] = (seen.statuses[s] ?? 0) + n;
    for (const p of o.problems) seen.problems.add(p);
    ops.set(o.operation, seen);
  }
  for (const p of report.notInReference) unknown.add(p);
}
const rows = [...ops.entries()].sort(([a], [b]) => a.localeCompare(b));
for (const [op, r] of rows) {
  const statuses = Object.entries(r.statuses).map(([s, n]) => `${s}x${n}`).join(' ');
  console.log(`${r.problems.size ? 'OFF' : 'ok '}  ${op}  (${r.calls} calls: ${statuses})`);
  for (const p of r.problems) console.log(`       ${p}`);
}
for (const p of [...unknown].sort()) console.log(`??   ${p}  (not in the reference)`);
const off = rows.filter(([, r]) => r.problems.size > 0).length;
console.log(`${rows.length - off} of ${rows.length} operations exercised conform; ${unknown.size} paths not in the reference`);
process.exit(off ? 1 : 0);
