/**
 * The units catalog over HTTP (`GET /units`, `POST /units/byids`, `GET /units/systems`, `GET /units/{id}`)
 * and unit conversion of data points (`targetUnit`, `targetUnitSystem` on list, aggregates and latest):
 * converted values against hand-computed ones, the response's unit fields, and every refusal.
 */
import { sql } from '../src/storage/sql.js';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGGREGATES } from '../src/resources/datapoints/schema.js';
import { parseUnitCatalog, unitCatalog } from '../src/resources/units/catalog.js';
import { unitConversion } from '../src/resources/units/conversion.js';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

const catalogFile = (name: string) => JSON.parse(readFileSync(new URL(`../catalog/units/${name}`, import.meta.url), 'utf8'));
const UNITS = catalogFile('units.json') as Array<Record<string, any>>;
const SYSTEMS = catalogFile('unitSystems.json') as Array<Record<string, any>>;

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const T0 = Date.UTC(2024, 0, 1);

let counter = 0;
async function series(fields: Record<string, unknown>, points: Array<[number, number]> = []): Promise<{ id: number; externalId: string }> {
  const externalId = `u-${counter++}`;
  const res = await h.post('/timeseries', { items: [{ externalId, ...fields }] });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  if (points.length) {
    const ins = await h.post('/timeseries/data', { items: [{ externalId, datapoints: points.map(([timestamp, value]) => ({ timestamp, value })) }] });
    expect(ins.status, JSON.stringify(ins.body)).toBe(200);
  }
  return res.body.items[0];
}

async function list(body: Record<string, unknown>) {
  const res = await h.post('/timeseries/data/list', body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.items as any[];
}

const values = (item: any) => item.datapoints.map((p: any) => p.value as number);

function expectClose(actual: number[], expected: number[]) {
  expect(actual.length).toBe(expected.length);
  actual.forEach((a, i) => expect(a, `value ${i}: ${a} vs ${expected[i]}`).toBeCloseTo(expected[i], 9));
}

describe('the units catalog', () => {
  it('lists every unit of the catalog, as the data file has them', async () => {
    const res = await h.get('/units');
    expect(res.status).toBe(200);
    expect(res.body.items).toHaveLength(UNITS.length);
    expect(res.body.items).toEqual(UNITS);
    expect(res.body.nextCursor).toBeUndefined();
    const celsius = res.body.items.find((u: any) => u.externalId === 'temperature:deg_c');
    expect(celsius).toMatchObject({ name: 'DEG_C', symbol: '°C', quantity: 'Temperature', conversion: { multiplier: 1, offset: 273.15 } });
  });

  it('lists the unit systems', async () => {
    const res = await h.get('/units/systems');
    expect(res.status).toBe(200);
    expect(res.body.items).toEqual(SYSTEMS);
    expect(res.body.items.map((s: any) => s.name)).toEqual(['Default', 'SI', 'Imperial']);
  });

  it('retrieves units by externalId in request order; unknown ones are missing unless ignored', async () => {
    const res = await h.post('/units/byids', { items: [{ externalId: 'pressure:bar' }, { externalId: 'temperature:deg_c' }] });
    expect(res.status).toBe(200);
    expect(res.body.items.map((u: any) => u.externalId)).toEqual(['pressure:bar', 'temperature:deg_c']);
    expect(res.body.items[0]).toEqual(UNITS.find((u) => u.externalId === 'pressure:bar'));

    const missing = await h.post('/units/byids', { items: [{ externalId: 'pressure:bar' }, { externalId: 'pressure:nope' }, { externalId: 'x' }] });
    expect(errorMessage(missing, 400)).toMatch(/2 items were not found: \{"externalId":"pressure:nope"\}, \{"externalId":"x"\}/);
    expect(missing.body.error.missing).toEqual([{ externalId: 'pressure:nope' }, { externalId: 'x' }]);

    const ignored = await h.post('/units/byids', { items: [{ externalId: 'pressure:nope' }, { externalId: 'pressure:bar' }], ignoreUnknownIds: true });
    expect(ignored.body.items.map((u: any) => u.externalId)).toEqual(['pressure:bar']);
    const nullIgnore = await h.post('/units/byids', { items: [{ externalId: 'pressure:nope' }], ignoreUnknownIds: null });
    expect(nullIgnore.body.error.missing).toEqual([{ externalId: 'pressure:nope' }]);
  });

  it('refuses bad byids requests, naming the place', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ items: [] }, /items: must have at least 1 item/],
      [{ items: [{ id: 1 }] }, /items\[0\]/],
      [{ items: [{ externalId: 'pressure:bar' }], limit: 5 }, /limit/],
      [{ items: [{ externalId: 'pressure:bar' }, { externalId: 'pressure:bar' }] }, /same item more than once/],
      [{ items: Array.from({ length: 1001 }, (_, i) => ({ externalId: `x${i}` })) }, /items: must have at most 1000/],
    ];
    for (const [body, message] of cases) expect(errorMessage(await h.post('/units/byids', body), 400)).toMatch(message);
  });

  it('retrieves one unit by its externalId in the path', async () => {
    const res = await h.get(`/units/${encodeURIComponent('temperature:deg_f')}`);
    expect(res.status).toBe(200);
    expect(res.body.items).toEqual([UNITS.find((u) => u.externalId === 'temperature:deg_f')]);
    const unknown = await h.get('/units/temperature:nope');
    expect(errorMessage(unknown, 400)).toMatch(/not found/);
    expect(unknown.body.error.missing).toEqual([{ externalId: 'temperature:nope' }]);
  });

  it('checks the catalog files when it loads them', () => {
    const unit = (externalId: string, quantity: string, multiplier = 1) => ({
      externalId,
      name: 'N',
      longName: 'L',
      symbol: 'S',
      aliasNames: [],
      quantity,
      conversion: { multiplier, offset: 0 },
      source: null,
      sourceReference: null,
    });
    const system = (unitExternalId: string, name = 'Length') => [{ name: 'SI', quantities: [{ name, unitExternalId }] }];
    expect(() => parseUnitCatalog([unit('length:m', 'Length')], system('length:m'))).not.toThrow();
    expect(() => parseUnitCatalog([unit('length:m', 'Length', 0)], [])).toThrow(/units\.json: \/0\/conversion\/multiplier/);
    expect(() => parseUnitCatalog([unit('length:m', 'Length'), unit('length:m', 'Length')], [])).toThrow(/"length:m" appears twice/);
    expect(() => parseUnitCatalog([unit('length:m', 'Length')], system('length:ft'))).toThrow(/SI, Length: no unit "length:ft"/);
    expect(() => parseUnitCatalog([unit('length:m', 'Length')], system('length:m', 'Mass'))).toThrow(/SI, Mass: length:m measures Length/);
    expect(() => parseUnitCatalog([{ externalId: 'x' }], [])).toThrow(/units\.json/);
  });
});

describe('converting raw points', () => {
  it('converts with the catalog: degC to degF and K, Pa to bar, and names the target unit', async () => {
    const c = await series({ unitExternalId: 'temperature:deg_c', unit: '°C' }, [
      [T0, -40],
      [T0 + 1, 0],
      [T0 + 2, 100],
    ]);
    const p = await series({ unitExternalId: 'pressure:pa', unit: 'Pa' }, [
      [T0, 100_000],
      [T0 + 1, 250_000],
    ]);
    const window = { start: T0, end: T0 + 10 };
    const [f, k, same, plain, bar] = await list({
      ...window,
      items: [
        { id: c.id, targetUnit: 'temperature:deg_f' },
        { id: c.id, targetUnit: 'temperature:k' },
        { id: c.id, targetUnit: 'temperature:deg_c' },
        { id: c.id },
        { id: p.id, targetUnit: 'pressure:bar' },
      ],
    });
    expectClose(values(f), [-40, 32, 212]);
    expectClose(values(k), [233.15, 273.15, 373.15]);
    expectClose(values(bar), [1, 2.5]);
    expect(values(same)).toEqual([-40, 0, 100]);
    expect(values(plain)).toEqual([-40, 0, 100]);
    expect(f.datapoints.map((d: any) => d.timestamp)).toEqual([T0, T0 + 1, T0 + 2]);
    // The item names the unit its values are in; the free-text unit is left out once converted.
    expect(f.unitExternalId).toBe('temperature:deg_f');
    expect(f.unit).toBeUndefined();
    expect(same).toMatchObject({ unitExternalId: 'temperature:deg_c', unit: '°C' });
    expect(plain).toMatchObject({ unitExternalId: 'temperature:deg_c', unit: '°C' });
  });

  it('converts to the unit a unit system gives the series quantity, with the system named in any case', async () => {
    const c = await series({ unitExternalId: 'temperature:deg_c' }, [
      [T0, 0],
      [T0 + 1, 100],
    ]);
    const f = await series({ unitExternalId: 'temperature:deg_f' }, [[T0, 32]]);
    const [imperial, lower, si, fromF] = await list({
      start: T0,
      end: T0 + 10,
      items: [
        { id: c.id, targetUnitSystem: 'Imperial' },
        { id: c.id, targetUnitSystem: 'imperial' },
        { id: c.id, targetUnitSystem: 'SI' },
        { id: f.id, targetUnitSystem: 'Default' },
      ],
    });
    expectClose(values(imperial), [32, 212]);
    expect(imperial.unitExternalId).toBe('temperature:deg_f');
    expectClose(values(lower), [32, 212]);
    expectClose(values(si), [273.15, 373.15]);
    expect(si.unitExternalId).toBe('temperature:k');
    expectClose(values(fromF), [0]);
    expect(fromF.unitExternalId).toBe('temperature:deg_c');
  });

  it('takes top-level targets as defaults that an item replaces with either form', async () => {
    const c = await series({ unitExternalId: 'temperature:deg_c' }, [[T0, 100]]);
    const [byDefault, ownUnit, ownSystem] = await list({
      start: T0,
      end: T0 + 10,
      targetUnit: 'temperature:k',
      items: [{ id: c.id }, { id: c.id, targetUnit: 'temperature:deg_f' }, { id: c.id, targetUnitSystem: 'Default' }],
    });
    expectClose(values(byDefault), [373.15]);
    expectClose(values(ownUnit), [212]);
    expect(values(ownSystem)).toEqual([100]);
    expect(ownSystem.unitExternalId).toBe('temperature:deg_c');
  });

  it('converts outside points and bad points with values, and keeps the unit across pages', async () => {
    const c = await series({ unitExternalId: 'temperature:deg_c' });
    const ins = await h.post('/timeseries/data', {
      items: [
        {
          id: c.id,
          datapoints: [
            { timestamp: T0, value: 0 },
            { timestamp: T0 + 1, value: 10, status: { code: 0x80000000 } },
            { timestamp: T0 + 2, value: 20 },
            { timestamp: T0 + 3, value: 30 },
            { timestamp: T0 + 4, value: 40 },
          ],
        },
      ],
    });
    expect(ins.status).toBe(200);
    const [outside] = await list({ items: [{ id: c.id, start: T0 + 2, end: T0 + 4, includeOutsidePoints: true, targetUnit: 'temperature:k' }] });
    expectClose(values(outside), [273.15, 293.15, 303.15, 313.15]);
    const [bad] = await list({ items: [{ id: c.id, start: T0, end: T0 + 3, ignoreBadDataPoints: false, includeStatus: true, targetUnit: 'temperature:k' }] });
    expectClose(values(bad), [273.15, 283.15, 293.15]);
    expect(bad.datapoints[1].status.code).toBe(0x80000000);

    const first = (await list({ items: [{ id: c.id, start: T0, end: T0 + 10, limit: 2, targetUnit: 'temperature:deg_f' }] }))[0];
    expectClose(values(first), [32, 68]);
    const second = (await list({ items: [{ id: c.id, start: T0, end: T0 + 10, limit: 2, targetUnit: 'temperature:deg_f', cursor: first.nextCursor }] }))[0];
    expectClose(values(second), [86, 104]);
    // A cursor belongs to the unit it was issued for.
    const other = await h.post('/timeseries/data/list', { items: [{ id: c.id, start: T0, end: T0 + 10, limit: 2, targetUnit: 'temperature:k', cursor: first.nextCursor }] });
    expect(errorMessage(other, 400)).toMatch(/items\[0\]\.cursor: this cursor does not belong to this query/);
  });
});

describe('exact conversion', () => {
  it("gives the official JavaScript client's figures exactly: 100 °C is 212 °F and 373.15 K, in points, aggregates and the latest point", async () => {
    // As its test does it: a series in °F whose unit is then set to °C, and a point of 100.
    const created = await h.post('/timeseries', { items: [{ externalId: 'sdk-typed-unit', unitExternalId: 'temperature:deg_f' }] });
    const { id } = created.body.items[0];
    const updated = await h.post('/timeseries/update', { items: [{ id, update: { unitExternalId: { set: 'temperature:deg_c' } } }] });
    expect(updated.body.items[0].unitExternalId).toBe('temperature:deg_c');
    expect((await h.post('/timeseries/data', { items: [{ id, datapoints: [{ timestamp: T0, value: 100 }] }] })).status).toBe(200);

    const [raw, min, si] = await list({
      start: T0,
      end: T0 + 86_400_000,
      items: [
        { id, targetUnit: 'temperature:deg_f' },
        { id, targetUnit: 'temperature:deg_f', aggregates: ['min', 'sum'], granularity: '1d' },
        { id, targetUnitSystem: 'SI' },
      ],
    });
    expect(raw.datapoints[0].value).toBe(212);
    expect(min.datapoints[0]).toMatchObject({ min: 212, sum: 212 });
    expect(si.datapoints[0].value).toBe(373.15);
    const latest = await h.post('/timeseries/data/latest', { items: [{ id, targetUnit: 'temperature:deg_f' }, { id, targetUnitSystem: 'SI' }] });
    expect(latest.body.items.map((i: any) => i.datapoints[0].value)).toEqual([212, 373.15]);
  });

  it('converts a whole number between two units of a quantity to the nearest double of the exact answer, and back to itself', () => {
    // The fraction each factor stands for, found without the server's method: the shortest of its decimal
    // text and of the fractions with a denominator up to 20000 that round to it. Only factors whose fraction
    // is short enough that no other fraction as simple rounds to the same double are swept (q² · ulp < 1).
    const intended = (x: number): [bigint, bigint] | undefined => {
      const candidates: Array<[bigint, bigint]> = [];
      const [digits, exponent = '0'] = String(x).split('e');
      const [whole, decimals = ''] = digits.split('.');
      const scale = decimals.length - Number(exponent);
      const n = BigInt(whole + decimals);
      candidates.push(scale >= 0 ? [n, 10n ** BigInt(scale)] : [n * 10n ** BigInt(-scale), 1n]);
      for (let q = 1; q <= 20_000; q++) {
        const p = Math.round(x * q);
        if (p / q === x) {
          candidates.push([BigInt(p), BigInt(q)]);
          break;
        }
      }
      const [p, q] = candidates.map(([p, q]) => reduce(p, q)).sort((a, b) => (a[1] < b[1] ? -1 : 1))[0];
      return Number(q) ** 2 * Math.max(x, Number.MIN_VALUE) * 2 ** -51 < 1 ? [p, q] : undefined;
    };
    const gcd = (a: bigint, b: bigint): bigint => (b === 0n ? (a < 0n ? -a : a) : gcd(b, a % b));
    const reduce = (p: bigint, q: bigint): [bigint, bigint] => [p / gcd(p, q), q / gcd(p, q)];
    const safe = (n: bigint) => n <= BigInt(Number.MAX_SAFE_INTEGER) && n >= -BigInt(Number.MAX_SAFE_INTEGER);

    const byQuantity = new Map<string, Array<Record<string, any>>>();
    for (const u of UNITS) byQuantity.set(u.quantity, [...(byQuantity.get(u.quantity) ?? []), u]);
    let exactPairs = 0;
    for (const units of byQuantity.values()) {
      for (const a of units) {
        for (const b of units) {
          const there = unitConversion(unitCatalog.unit(a.externalId)!, unitCatalog.unit(b.externalId)!);
          const back = unitConversion(unitCatalog.unit(b.externalId)!, unitCatalog.unit(a.externalId)!);
          const factors = [a.conversion.multiplier, a.conversion.offset, b.conversion.multiplier, b.conversion.offset].map(intended);
          for (let v = -300; v <= 300; v += 7) {
            const w = there.value(v);
            // Every pair: the round trip comes back to within rounding of the largest term it adds up.
            const magnitude = Math.max(1, Math.abs(v), Math.abs(w * back.scale), Math.abs(back.shift));
            expect(Math.abs(back.value(w) - v), `${a.externalId} -> ${b.externalId} -> back, ${v}`).toBeLessThanOrEqual(1e-12 * magnitude);
            if (factors.some((f) => f === undefined)) continue;
            // v * s + t with s = m1 / m2 and t = o1 * s - o2, over one denominator: (v * A + B) / D. When A, B and
            // D fit a double, the answer for a whole number is one division of two exact doubles.
            const [[m1p, m1q], [o1p, o1q], [m2p, m2q], [o2p, o2q]] = factors as Array<[bigint, bigint]>;
            const [sp, sq] = reduce(m1p * m2q, m1q * m2p);
            const [tp, tq] = reduce(o1p * sp * o2q - o2p * o1q * sq, o1q * sq * o2q);
            const D = (sq * tq) / gcd(sq, tq);
            const [A, B] = [(sp * D) / sq, (tp * D) / tq];
            const [p, q] = reduce(BigInt(v) * A + B, D);
            if (![A, B, D, BigInt(v) * A + B].every(safe)) continue;
            exactPairs++;
            expect(w, `${v} ${a.externalId} in ${b.externalId}`).toBe(Number(p) / Number(q));
            if (p % q === 0n) expect(back.value(w), `${w} ${b.externalId} in ${a.externalId}`).toBe(v);
          }
        }
      }
    }
    expect(exactPairs).toBeGreaterThan(10_000);
  });
});

describe('converting aggregates', () => {
  const ALL = [...AGGREGATES];

  it('gives the aggregates of the converted values (hand-computed, degC to degF)', async () => {
    const c = await series({ unitExternalId: 'temperature:deg_c' }, [
      [T0, 0],
      [T0 + 1000, 100],
    ]);
    const [f] = await list({ items: [{ id: c.id, start: T0, end: T0 + 3_600_000, granularity: '1h', aggregates: ALL, targetUnit: 'temperature:deg_f' }] });
    expect(f.unitExternalId).toBe('temperature:deg_f');
    const [b] = f.datapoints;
    expect(b.timestamp).toBe(T0);
    expect(b.min).toBeCloseTo(32, 9);
    expect(b.max).toBeCloseTo(212, 9);
    expect(b.maxDatapoint).toEqual({ timestamp: T0 + 1000, value: expect.closeTo(212, 9) });
    expect(b.minDatapoint).toEqual({ timestamp: T0, value: expect.closeTo(32, 9) });
    expect(b.count).toBe(2);
    expect(b.sum).toBeCloseTo(32 + 212, 9);
    expect(b.average).toBeCloseTo(122, 9);
    expect(b.interpolation).toBeCloseTo(32, 9);
    expect(b.stepInterpolation).toBeCloseTo(32, 9);
    expect(b.totalVariation).toBeCloseTo(180, 9);
    expect(b.discreteVariance).toBeCloseTo(2500 * 1.8 * 1.8, 6);
    expect(b.countGood).toBe(2);
  });

  it('converts every aggregate by its rule: values, sums, differences, variances; counts and durations as they are', async () => {
    const points: Array<[number, number]> = Array.from({ length: 40 }, (_, i) => [T0 + i * 61_000, 20 + 15 * Math.sin(i / 3)]);
    const c = await series({ unitExternalId: 'temperature:deg_c' }, points);
    const query = { id: c.id, start: T0, end: T0 + 3_600_000, granularity: '10m', aggregates: ALL };
    const [plain, f] = await list({ items: [query, { ...query, targetUnit: 'temperature:deg_f' }] });
    const a = 1.8;
    const b = 32;
    expect(f.datapoints.length).toBe(plain.datapoints.length);
    expect(plain.datapoints.length).toBeGreaterThan(3);
    plain.datapoints.forEach((p: any, i: number) => {
      const q = f.datapoints[i];
      expect(Object.keys(q)).toEqual(Object.keys(p));
      for (const name of Object.keys(p)) {
        const [was, is] = [p[name], q[name]];
        const where = `bucket ${i} ${name}`;
        if (['average', 'max', 'min', 'interpolation', 'stepInterpolation'].includes(name)) expect(is, where).toBeCloseTo(a * was + b, 9);
        else if (name === 'maxDatapoint' || name === 'minDatapoint') expect(is, where).toEqual({ timestamp: was.timestamp, value: expect.closeTo(a * was.value + b, 9) });
        else if (name === 'sum') expect(is, where).toBeCloseTo(a * was + p.count * b, 8);
        else if (name === 'totalVariation') expect(is, where).toBeCloseTo(a * was, 9);
        else if (name === 'continuousVariance' || name === 'discreteVariance') expect(is, where).toBeCloseTo(a * a * was, 8);
        else expect(is, where).toBe(was);
      }
    });
    expect(plain.datapoints.filter((p: any) => p.sum !== undefined).length).toBeGreaterThan(3);
    // The sum equals the sum of the converted raw values.
    const [raw] = await list({ items: [{ id: c.id, start: T0, end: T0 + 600_000, targetUnit: 'temperature:deg_f' }] });
    const firstBucketSum = values(raw).reduce((s: number, v: number) => s + v, 0);
    expect(f.datapoints[0].sum).toBeCloseTo(firstBucketSum, 8);
  });

  it('gives a converted sum without count when only the sum is asked for', async () => {
    const c = await series({ unitExternalId: 'temperature:deg_c' }, [
      [T0, 10],
      [T0 + 1, 20],
      [T0 + 2, 30],
    ]);
    const [k] = await list({ items: [{ id: c.id, start: T0, end: T0 + 60_000, granularity: '1m', aggregates: ['sum'], targetUnit: 'temperature:k' }] });
    expect(k.datapoints).toEqual([{ timestamp: T0, sum: expect.closeTo(60 + 3 * 273.15, 9) }]);
  });
});

describe('converting the latest point', () => {
  it('converts to a unit or a unit system and names the unit', async () => {
    const c = await series({ unitExternalId: 'temperature:deg_c', unit: 'C' }, [
      [T0, 0],
      [T0 + 1, 100],
    ]);
    const res = await h.post('/timeseries/data/latest', {
      items: [{ id: c.id, targetUnit: 'temperature:deg_f' }, { id: c.id, targetUnitSystem: 'SI' }, { id: c.id, before: T0 + 1, targetUnitSystem: 'imperial' }, { id: c.id }],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [f, k, earlier, plain] = res.body.items;
    expect(f.unitExternalId).toBe('temperature:deg_f');
    expect(f.unit).toBeUndefined();
    expectClose(values(f), [212]);
    expect(k.unitExternalId).toBe('temperature:k');
    expectClose(values(k), [373.15]);
    expectClose(values(earlier), [32]);
    expect(plain).toMatchObject({ unitExternalId: 'temperature:deg_c', unit: 'C', datapoints: [{ timestamp: T0 + 1, value: 100 }] });
  });
});

describe('refusals', () => {
  it('refuses a conversion that cannot be made, naming the place, on list and latest', async () => {
    const c = await series({ unitExternalId: 'temperature:deg_c' }, [[T0, 1]]);
    const none = await series({}, [[T0, 1]]);
    const angle = await series({ unitExternalId: 'angle:deg' }, [[T0, 1]]);
    const text = await series({ isString: true });
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ id: c.id, targetUnit: 'pressure:bar' }, /items\[0\]\.targetUnit: pressure:bar measures Pressure, and time series "u-\d+" is in temperature:deg_c \(Temperature\)/],
      [{ id: c.id, targetUnit: 'temperature:deg_x' }, /items\[0\]\.targetUnit: "temperature:deg_x" is not a unit of the units catalog/],
      [{ id: none.id, targetUnit: 'temperature:deg_f' }, /items\[0\]\.targetUnit: time series "u-\d+" has no unitExternalId/],
      [{ id: none.id, targetUnitSystem: 'SI' }, /items\[0\]\.targetUnitSystem: time series "u-\d+" has no unitExternalId/],
      [{ id: c.id, targetUnit: 'temperature:deg_f', targetUnitSystem: 'SI' }, /items\[0\]: give targetUnit or targetUnitSystem, not both/],
      [{ id: c.id, targetUnitSystem: 'Metric' }, /items\[0\]\.targetUnitSystem: "Metric" is not a unit system of the units catalog \(known: Default, SI, Imperial\)/],
      [{ id: angle.id, targetUnitSystem: 'Imperial' }, /items\[0\]\.targetUnitSystem: the unit system Imperial has no unit for Angle/],
      [{ id: text.id, targetUnit: 'temperature:deg_f' }, /items\[0\]\.targetUnit: time series "u-\d+" holds strings/],
    ];
    for (const [item, message] of cases) {
      expect(errorMessage(await h.post('/timeseries/data/list', { items: [item] }), 400)).toMatch(message);
      expect(errorMessage(await h.post('/timeseries/data/latest', { items: [item] }), 400)).toMatch(message);
    }
    // An aggregate query is refused the same way.
    const agg = await h.post('/timeseries/data/list', { items: [{ id: c.id, aggregates: ['sum'], granularity: '1h', targetUnit: 'length:m' }] });
    expect(errorMessage(agg, 400)).toMatch(/items\[0\]\.targetUnit: length:m measures Length/);
    // Both at the top level; and the request's own values are checked even for series skipped as unknown.
    const both = await h.post('/timeseries/data/list', { targetUnit: 'temperature:k', targetUnitSystem: 'SI', items: [{ id: c.id }] });
    expect(errorMessage(both, 400)).toMatch(/^targetUnit: give targetUnit or targetUnitSystem, not both/);
    const skipped = await h.post('/timeseries/data/list', { ignoreUnknownIds: true, items: [{ externalId: 'u-none', targetUnit: 'nope' }] });
    expect(errorMessage(skipped, 400)).toMatch(/items\[0\]\.targetUnit: "nope" is not a unit/);
  });

  it('reads a series stored with a unit the catalog lacks, and refuses only to convert it', async () => {
    const legacy = await series({ unitExternalId: 'temperature:deg_c' }, [[T0, 5]]);
    await h.strata.services.db.run(sql`UPDATE timeseries SET unit_external_id = 'temperature:legacy' WHERE id = ${legacy.id}`);
    const [plain] = await list({ items: [{ id: legacy.id, start: T0, end: T0 + 1 }] });
    expect(plain).toMatchObject({ unitExternalId: 'temperature:legacy', datapoints: [{ timestamp: T0, value: 5 }] });
    const latest = await h.post('/timeseries/data/latest', { items: [{ id: legacy.id }] });
    expect(latest.body.items[0].datapoints).toEqual([{ timestamp: T0, value: 5 }]);
    const converted = await h.post('/timeseries/data/list', { items: [{ id: legacy.id, targetUnit: 'temperature:k' }] });
    expect(errorMessage(converted, 400)).toMatch(/items\[0\]\.targetUnit: the unitExternalId of time series "u-\d+", "temperature:legacy", is not in the units catalog/);
    // Its other fields can still be changed; the unit stays until it is replaced by a catalog unit.
    const renamed = await h.post('/timeseries/update', { items: [{ id: legacy.id, update: { name: { set: 'kept' } } }] });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    expect(renamed.body.items[0]).toMatchObject({ name: 'kept', unitExternalId: 'temperature:legacy' });
    const byIds = await h.post('/timeseries/byids', { items: [{ id: legacy.id }] });
    expect(byIds.body.items[0].unitExternalId).toBe('temperature:legacy');
  });
});
