/**
 * Result rows and their presentations: a plain-text table for the terminal, a Markdown table for the README,
 * and JSON for `bench/results/latest.json`.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';

export interface ResultRow {
  /** Stable key, e.g. `events.list.typeRange`. */
  id: string;
  workload: string;
  /** Strata's figure, formatted. */
  value: string;
  /** What the reference did and its figure, formatted. */
  reference?: string;
  /** Strata against the reference, formatted with its direction (e.g. "0.61× of bare"). */
  ratio?: string;
  target?: string;
  /** Whether the target is met; undefined when there is no target. */
  met?: boolean;
  /** Raw numbers for the JSON file. */
  data: Record<string, unknown>;
}

export interface Machine {
  cpu: string;
  cores: number;
  memoryGiB: number;
  node: string;
  platform: string;
}

export function machine(): Machine {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
  };
}

/**
 * CPU time the hypervisor gave to others while this machine's processes wanted it (the `steal` column of
 * /proc/stat, all CPUs together), in ms; undefined where there is no /proc/stat. A virtual CPU that is not
 * running stalls whatever was on it, so steal during a latency measurement shows up in its tail.
 */
export function stolenMs(): number | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'latin1').split('\n', 1)[0].trim().split(/\s+/);
    // cpu user nice system idle iowait irq softirq steal ...; in USER_HZ ticks, 100 per second on Linux.
    const steal = Number(fields[8]);
    return Number.isFinite(steal) ? steal * 10 : undefined;
  } catch {
    return undefined;
  }
}

export function describeMachine(m: Machine): string {
  return `${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB RAM, Node ${m.node}, ${m.platform}`;
}

const mark = (met: boolean | undefined) => (met === undefined ? '' : met ? 'met' : 'MISSED');

export function textTable(rows: readonly ResultRow[]): string {
  const head = ['Workload', 'Strata', 'Reference', 'Ratio', 'Target', ''];
  const body = rows.map((r) => [r.workload, r.value, r.reference ?? '', r.ratio ?? '', r.target ?? '', mark(r.met)]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join(' | ').trimEnd();
  return [line(head), widths.map((w) => '-'.repeat(w)).join('-+-'), ...body.map(line)].join('\n');
}

export function markdownTable(rows: readonly ResultRow[]): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  const out = ['| Workload | Strata | Reference (same run) | Ratio | Target | |', '|---|---|---|---|---|---|'];
  for (const r of rows) {
    const met = r.met === undefined ? '' : r.met ? '✅' : '❌';
    out.push(`| ${[r.workload, r.value, r.reference ?? '', r.ratio ?? '', r.target ?? '', met].map(esc).join(' | ')} |`);
  }
  return out.join('\n');
}
