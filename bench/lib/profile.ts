/**
 * Summaries of V8 CPU profiles (`.cpuprofile`, as written by the server child when BENCH_PROFILE=1):
 * self time by function, inclusive time by function, and self time by package/area.
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
}

export interface ProfileEntry {
  name: string;
  ms: number;
  share: number;
}

export interface ProfileSummary {
  totalMs: number;
  /** Share of samples where the server was idle (waiting for I/O). */
  idleShare: number;
  self: ProfileEntry[];
  inclusive: ProfileEntry[];
  areas: ProfileEntry[];
}

function shortUrl(url: string): string {
  return url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, '')
    .replace(/^.*\/\.bench-build\//, '');
}

/** The SQL recorder's wrapper is the JS caller of every statement call: V8 books part of the native call there. */
const RECORDER = /\/bench\/lib\/capture\.js$/;
const RECORDER_NAME = 'better-sqlite3 statement call (self time booked to the bench SQL recorder wrapper)';

function frameKey(f: CallFrame): string {
  if (RECORDER.test(f.url)) return RECORDER_NAME;
  const name = f.functionName || '(anonymous)';
  if (!f.url) return name;
  return `${name} ${shortUrl(f.url)}:${f.lineNumber + 1}`;
}

function area(f: CallFrame): string {
  if (RECORDER.test(f.url)) return 'better-sqlite3 statement calls (booked to the bench SQL recorder)';
  const name = f.functionName;
  if (!f.url) {
    if (name === '(garbage collector)' || name === '(idle)' || name === '(program)') return name;
    return `native: ${name || '(anonymous)'}`;
  }
  const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(f.url);
  if (m) return m[1];
  if (f.url.startsWith('node:')) return `node: ${f.url.slice(5).split('/')[0]}`;
  if (f.url.includes('/.bench-build/src/')) return `strata ${f.url.replace(/^.*\/\.bench-build\/src\//, 'src/')}`;
  return shortUrl(f.url);
}

function top(map: Map<string, number>, totalHits: number, msPerHit: number, n: number): ProfileEntry[] {
  return [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, hits]) => ({ name, ms: hits * msPerHit, share: hits / totalHits }));
}

interface LoadedProfile {
  profile: CpuProfile;
  byId: Map<number, ProfileNode>;
  parent: Map<number, number>;
  /** Samples per node. */
  hits: Map<number, number>;
}

function loadProfile(file: string): LoadedProfile {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) byId.set(node.id, node);
  for (const node of profile.nodes) for (const c of node.children ?? []) parent.set(c, node.id);
  const hits = new Map<number, number>();
  if (profile.samples?.length) for (const s of profile.samples) hits.set(s, (hits.get(s) ?? 0) + 1);
  else for (const node of profile.nodes) if (node.hitCount) hits.set(node.id, node.hitCount);
  return { profile, byId, parent, hits };
}

/** A function as the profile names it: its name and the end of its script's path. */
export interface FunctionRef {
  name: string;
  file: string;
}

/**
 * The share of busy samples, over all the given profiles together, whose stack holds one of the functions:
 * the CPU spent in them and in everything they call.
 */
export function inclusiveShare(files: readonly string[], functions: readonly FunctionRef[]): { share: number; busySamples: number } {
  const matches = (f: CallFrame) => functions.some((x) => f.functionName === x.name && f.url.endsWith(x.file));
  let busy = 0;
  let inside = 0;
  for (const file of files) {
    const { byId, parent, hits } = loadProfile(file);
    const memo = new Map<number, boolean>();
    const under = (id: number): boolean => {
      let r = memo.get(id);
      if (r === undefined) {
        const up = parent.get(id);
        r = matches(byId.get(id)!.callFrame) || (up !== undefined && under(up));
        memo.set(id, r);
      }
      return r;
    };
    for (const [id, h] of hits) {
      if (byId.get(id)!.callFrame.functionName === '(idle)') continue;
      busy += h;
      if (under(id)) inside += h;
    }
  }
  return { share: busy ? inside / busy : 0, busySamples: busy };
}

export function summarizeProfile(file: string, n = 15): ProfileSummary {
  const { profile, byId, parent, hits } = loadProfile(file);

  let totalHits = 0;
  let idleHits = 0;
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const areas = new Map<string, number>();
  for (const [id, h] of hits) {
    const node = byId.get(id)!;
    totalHits += h;
    if (node.callFrame.functionName === '(idle)') {
      idleHits += h;
      continue;
    }
    const key = frameKey(node.callFrame);
    self.set(key, (self.get(key) ?? 0) + h);
    const a = area(node.callFrame);
    areas.set(a, (areas.get(a) ?? 0) + h);
    // Inclusive: every distinct function on the stack gets the sample once.
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const k = frameKey(byId.get(cur)!.callFrame);
      if (k === '(root)' || seen.has(k)) continue;
      seen.add(k);
      inclusive.set(k, (inclusive.get(k) ?? 0) + h);
    }
  }
  const totalMs = (profile.endTime - profile.startTime) / 1000;
  const msPerHit = totalHits ? totalMs / totalHits : 0;
  const busyHits = Math.max(1, totalHits - idleHits);
  return {
    totalMs,
    idleShare: totalHits ? idleHits / totalHits : 0,
    self: top(self, busyHits, msPerHit, n),
    inclusive: top(inclusive, busyHits, msPerHit, n),
    areas: top(areas, busyHits, msPerHit, n),
  };
}

export function formatProfile(name: string, s: ProfileSummary, n = 12): string {
  const pct = (x: number) => `${(x * 100).toFixed(1).padStart(5)}%`;
  const lines = [
    `CPU profile of the server during "${name}": ${s.totalMs.toFixed(0)} ms, idle ${pct(s.idleShare).trim()} (shares below are of busy time).`,
    '  Native better-sqlite3 work (SQLite and building row objects) shows as "native: all/get/run" plus self time of its JS caller.',
  ];
  lines.push('  self time by area:');
  for (const e of s.areas.slice(0, 8)) lines.push(`    ${pct(e.share)}  ${e.name}`);
  lines.push('  self time by function:');
  for (const e of s.self.slice(0, n)) lines.push(`    ${pct(e.share)}  ${e.name}`);
  lines.push('  inclusive time by function:');
  for (const e of s.inclusive.slice(0, n)) lines.push(`    ${pct(e.share)}  ${e.name}`);
  return lines.join('\n');
}
