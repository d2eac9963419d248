/**
 * Result rows and their presentations: a plain-text table for the terminal, a Markdown table for the README,
 * and JSON for `bench/results/latest.json`.
 */
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
