/**
 * Side-by-side comparison of benchmark runs: two (or more) configurations, each a source tree and extra
 * environment, run one after the other in alternation (A, B, A, B, ...) with the same sizes, so that drift
 * on a shared machine hits each alike. Prints, per result row, each configuration's figure (the median over
 * its runs) and the ratio of each to the first.
 *
 *   node --expose-gc .bench-build/bench/compare.js [--rounds N] [--out FILE] LABEL=DIR[:ENV=VALUE,ENV=VALUE...] ...
 *
 * e.g. (sizes from this process's environment, which every run inherits)
 *   BENCH_SUITES=events BENCH_EVENTS=100000 node --expose-gc .bench-build/bench/compare.js \
 *     main=/tmp/strata-main branch=. postgres=.:BENCH_BACKEND=postgres
 *
 * Every DIR must have been built first (`npx tsc -p bench/tsconfig.json` in it). A run's own JSON
 * (`DIR/bench/results/latest.json`) is copied next to the comparison's output before the next run starts.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ResultRow } from './lib/report.js';

interface Config {
  label: string;
  dir: string;
  env: Record<string, string>;
}

interface RunResult {
  rows: ResultRow[];
  loadAverage: { before: number; after: number };
  stolenSeconds?: number;
  totalSeconds: number;
}

const here = dirname(fileURLToPath(import.meta.url));
const benchDir = resolve(here, '..', '..', 'bench');

function parseArgs(argv: string[]): { rounds: number; out: string; configs: Config[] } {
  let rounds = 1;
  let out = join(benchDir, 'results', 'compare.json');
  const configs: Config[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--rounds') rounds = Number(argv[++i]);
    else if (a === '--out') out = resolve(argv[++i]);
    else {
      const m = /^([^=]+)=([^:]+)(?::(.*))?$/.exec(a);
      if (!m) throw new Error(`expected LABEL=DIR[:ENV=VALUE,...], got "${a}"`);
      const env: Record<string, string> = {};
      for (const kv of (m[3] ?? '').split(',').filter(Boolean)) {
        const eq = kv.indexOf('=');
        if (eq < 1) throw new Error(`expected ENV=VALUE, got "${kv}"`);
        env[kv.slice(0, eq)] = kv.slice(eq + 1);
      }
      configs.push({ label: m[1], dir: resolve(m[2]), env });
    }
  }
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds must be a positive whole number');
  if (configs.length < 2) throw new Error('name at least two configurations');
  return { rounds, out, configs };
}

/** The figures of a row worth comparing: name, value, and whether larger is better. */
export function figures(row: ResultRow): Array<{ name: string; value: number; higherIsBetter: boolean }> {
  const d = row.data as Record<string, unknown>;
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  const p50 = (v: unknown) => num((v as { p50?: unknown } | undefined)?.p50);
  const out: Array<{ name: string; value: number; higherIsBetter: boolean }> = [];
  const add = (name: string, value: number | undefined, higherIsBetter: boolean) => {
    if (value !== undefined) out.push({ name, value, higherIsBetter });
  };
  add('events/s', num(d.eventsPerSecond), true);
  add('CPU ms/1000', num(d.serverCpuMsPer1000), false);
  add('DB CPU ms/1000', num(d.databaseCpuMsPer1000), false);
  add('CPU ms/million', num(d.serverCpuMsPerMillion), false);
  add('DB CPU ms/million', num(d.databaseCpuMsPerMillion), false);
  add('points/s', num(d.pointsPerSecond), true);
  add('series/s', num(d.seriesPerSecond), true);
  add('req/s', num(d.rps), true);
  add('CPU µs/req', num(d.cpuMsPerRequest) === undefined ? undefined : num(d.cpuMsPerRequest)! * 1000, false);
  add('rate/s', num(d.rate), true);
  add('p50 ms', p50(d.http) ?? p50(d.strata) ?? p50(d.deepPage) ?? p50(d.latency) ?? p50(d.named) ?? num(d.p50), false);
  add('unnamed p50 ms', p50(d.unnamed), false);
  add('p99 ms', num((d.http as { p99?: unknown } | undefined)?.p99) ?? num((d.strata as { p99?: unknown } | undefined)?.p99), false);
  add('Strata CPU ms/req', num(d.serverCpuMsPerRequest), false);
  add('DB CPU ms/req', num(d.databaseCpuMsPerRequest), false);
  add('bytes/point', num(d.bytesPerPoint), false);
  add('statements/req', num(d.statementsPerRequest), false);
  add('BEGIN/COMMIT/req', num(d.transactionControlPerRequest), false);
  add('raw SQL p50 ms', num(d.rawSqlP50MsPerRequest) ?? num(d.rawSqlP50Ms) ?? num(d.rawSqlP50MsPerPage) ?? p50(d.sqlOnly), false);
  return out;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const fmt = (v: number) => (Math.abs(v) >= 100 ? Math.round(v).toLocaleString('en-US') : v.toPrecision(3));

function main(): void {
  const { rounds, out, configs } = parseArgs(process.argv.slice(2));
  const outDir = dirname(out);
  mkdirSync(outDir, { recursive: true });
  const results = new Map<string, RunResult[]>(configs.map((c) => [c.label, []]));
  for (let round = 1; round <= rounds; round++) {
    for (const c of configs) {
      console.error(`\n=== round ${round}/${rounds}: ${c.label} (${c.dir} ${JSON.stringify(c.env)}) ===`);
      const run = spawnSync(process.execPath, ['--expose-gc', join(c.dir, '.bench-build', 'bench', 'run.js')], {
        cwd: c.dir,
        env: { ...process.env, ...c.env },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      if (run.status !== 0) throw new Error(`${c.label}: the benchmark exited with ${run.status ?? run.signal}`);
      const file = join(c.dir, 'bench', 'results', 'latest.json');
      const kept = join(outDir, `compare-${c.label}-${round}.json`);
      copyFileSync(file, kept);
      results.get(c.label)!.push(JSON.parse(readFileSync(kept, 'utf8')) as RunResult);
    }
  }

  // One line per row and figure: each configuration's median, and its ratio to the first configuration's.
  const first = configs[0].label;
  const ids = [...new Set(configs.flatMap((c) => results.get(c.label)!.flatMap((r) => r.rows.map((row) => row.id))))];
  const lines: string[] = [];
  const table: Array<Record<string, unknown>> = [];
  lines.push(`| row | figure | ${configs.map((c) => c.label).join(' | ')} | ${configs.slice(1).map((c) => `${c.label} ÷ ${first}`).join(' | ')} |`);
  lines.push(`|---|---|${configs.map(() => '--:').join('|')}|${configs.slice(1).map(() => '--:').join('|')}|`);
  for (const id of ids) {
    const perConfig = configs.map((c) => results.get(c.label)!.map((r) => r.rows.find((row) => row.id === id)).filter((r): r is ResultRow => r !== undefined));
    const names = [...new Set(perConfig.flatMap((rows) => rows.flatMap((r) => figures(r).map((f) => f.name))))];
    for (const name of names) {
      const values = perConfig.map((rows) => rows.map((r) => figures(r).find((f) => f.name === name)?.value).filter((v): v is number => v !== undefined));
      const medians = values.map((v) => (v.length ? median(v) : NaN));
      const cells = values.map((v, i) => (v.length ? `${fmt(medians[i])}${v.length > 1 ? ` (${v.map(fmt).join(', ')})` : ''}` : 'n/a'));
      const ratios = medians.slice(1).map((m) => (Number.isFinite(m) && Number.isFinite(medians[0]) && medians[0] !== 0 ? `${(m / medians[0]).toFixed(2)}×` : 'n/a'));
      lines.push(`| ${id} | ${name} | ${cells.join(' | ')} | ${ratios.join(' | ')} |`);
      table.push({ id, figure: name, ...Object.fromEntries(configs.map((c, i) => [c.label, values[i]])) });
    }
  }
  const context = configs.map((c) =>
    results
      .get(c.label)!
      .map((r, i) => `${c.label} run ${i + 1}: ${r.totalSeconds.toFixed(0)} s, load ${r.loadAverage.before.toFixed(1)} → ${r.loadAverage.after.toFixed(1)}${r.stolenSeconds === undefined ? '' : `, steal ${r.stolenSeconds.toFixed(1)} s`}`)
      .join('; '),
  );
  console.log(lines.join('\n'));
  console.log(`\n${context.join('\n')}`);
  writeFileSync(out, `${JSON.stringify({ date: new Date().toISOString(), rounds, configs, table, context }, null, 2)}\n`);
  console.log(`\nWritten to ${out}`);
}

main();
