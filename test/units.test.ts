/**
 * The units catalog over HTTP (`GET /units`, `POST /units/byids`, `GET /units/systems`, `GET /units/{id}`).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseUnitCatalog } from '../src/resources/units/catalog.js';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

const catalogFile = (name: string) => JSON.parse(readFileSync(new URL(`../catalog/units/${name}`, import.meta.url), 'utf8'));
const UNITS = catalogFile('units.json') as Array<Record<string, any>>;
const SYSTEMS = catalogFile('unitSystems.json') as Array<Record<string, any>>;

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

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
