/**
 * Deterministic, realistic-looking events for the benchmark. Event `i` is always the same event, so the API
 * seeding and the raw-SQLite reference insert identical rows, and the query selectivities below hold at any N.
 *
 * Distribution (per event, independent):
 * - externalId `site-SS/<kind>-UUU/NNNNNNNNN`: 10 sites, 50 units per site; unit kind = KINDS[unit % 5], so
 *   the prefix `site-03/pump-` matches 1/10 × 1/5 = 2% of events;
 * - type: one of 8 (12.5% each); subtype: one of 4; source: one of 4;
 * - startTime: uniform over 2024; endTime: startTime + up to 8 h, absent for 10% (open events);
 * - description: 3–8 words; each word is from a 30-word common list (85%) or a 60-word rare list (15%), so a
 *   given rare word (e.g. "cavitation") is in about 1.4% of descriptions;
 * - metadata (5 keys): site, unit, severity (4 values), operator (50 values: 2% each), workOrder (random).
 */

export const YEAR_START = Date.UTC(2024, 0, 1);
export const YEAR_MS = 366 * 24 * 3600 * 1000;

export const TYPES = ['alarm', 'maintenance', 'inspection', 'shutdown', 'startup', 'calibration', 'failure', 'report'];
const SUBTYPES = ['planned', 'unplanned', 'automatic', 'manual'];
const SOURCES = ['scada', 'historian', 'cmms', 'manual-entry'];
const KINDS = ['pump', 'valve', 'compressor', 'motor', 'tank'];
const SEVERITIES = ['low', 'medium', 'high', 'critical'];
const COMMON = (
  'pressure temperature flow level high low alarm cleared operator acknowledged maintenance started completed ' +
  'inspection routine check unit offline online vibration threshold exceeded normal restored shift handover ' +
  'reading sensor value'
).split(' ');
const RARE = (
  'cavitation overheating leakage corrosion misalignment imbalance clogging backflow surge trip interlock bypass ' +
  'calibration drift fouling erosion seal bearing lubrication coupling impeller gasket valve actuator solenoid ' +
  'relay breaker fuse transformer inverter firmware network timeout retry watchdog battery ups generator ' +
  'compressor condenser evaporator chiller boiler burner flame purge ignition exhaust damper filter strainer ' +
  'separator scrubber flare vent'
).split(' ');

export interface BenchEvent {
  externalId: string;
  startTime: number;
  endTime?: number;
  type: string;
  subtype: string;
  description: string;
  source: string;
  metadata: Record<string, string>;
}

/** mulberry32: a small, fast, seedable PRNG. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pad = (n: number, w: number) => String(n).padStart(w, '0');

export function benchEvent(i: number): BenchEvent {
  const r = rng(Math.imul(i + 1, 0x9e3779b1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const site = Math.floor(r() * 10);
  const unit = Math.floor(r() * 50);
  const siteName = `site-${pad(site, 2)}`;
  const unitName = `${KINDS[unit % KINDS.length]}-${pad(unit, 3)}`;
  const startTime = YEAR_START + Math.floor(r() * YEAR_MS);
  const open = r() < 0.1;
  const words: string[] = [];
  const count = 3 + Math.floor(r() * 6);
  for (let w = 0; w < count; w++) words.push(r() < 0.85 ? pick(COMMON) : pick(RARE));
  const e: BenchEvent = {
    externalId: `${siteName}/${unitName}/${pad(i, 9)}`,
    startTime,
    type: pick(TYPES),
    subtype: pick(SUBTYPES),
    description: words.join(' '),
    source: pick(SOURCES),
    metadata: {
      site: siteName,
      unit: unitName,
      severity: pick(SEVERITIES),
      operator: `op-${pad(Math.floor(r() * 50), 2)}`,
      workOrder: `WO-${pad(Math.floor(r() * 1_000_000), 6)}`,
    },
  };
  if (!open) e.endTime = startTime + Math.floor(r() * 8 * 3600 * 1000);
  return e;
}

export function benchEvents(from: number, count: number): BenchEvent[] {
  const out: BenchEvent[] = new Array(count);
  for (let k = 0; k < count; k++) out[k] = benchEvent(from + k);
  return out;
}
