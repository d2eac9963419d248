// Merges the conformance proxy's reports (one per SDK test harness, written under STRATA_CONFORM) into one
// table: each operation exercised, its calls and statuses, and every difference from the reference.
// Differences listed in conform-known.json (each explained in docs/conformance.md) are marked `known`;
// exit status 1 when any other difference is found.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2] ?? '.conform';
const known = new Set(JSON.parse(readFileSync(new URL('./conform-known.json', import.meta.url), 'utf8')).map((k) => `${k.operation}\n${k.problem}`));
const isKnown = (op, problem) => known.has(`${op}\n${problem}`);
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
const newProblems = (op, r) => [...r.problems].filter((p) => !isKnown(op, p));
for (const [op, r] of rows) {
  const statuses = Object.entries(r.statuses).map(([s, n]) => `${s}x${n}`).join(' ');
  const mark = newProblems(op, r).length ? 'OFF' : r.problems.size ? 'known' : 'ok ';
  console.log(`${mark.padEnd(5)}  ${op}  (${r.calls} calls: ${statuses})`);
  for (const p of r.problems) console.log(`         ${isKnown(op, p) ? '(known) ' : ''}${p}`);
}
for (const p of [...unknown].sort()) console.log(`??     ${p}  (not in the reference)`);
const off = rows.filter(([op, r]) => newProblems(op, r).length > 0).length;
const knownOnly = rows.filter(([op, r]) => r.problems.size > 0 && newProblems(op, r).length === 0).length;
console.log(`${rows.length - off - knownOnly} of ${rows.length} operations exercised conform, ${knownOnly} differ only as docs/conformance.md explains, ${off} differ otherwise; ${unknown.size} paths not in the reference`);
process.exit(off ? 1 : 0);
