/**
 * Status codes and values of data points: every OPC UA condition of the published table is taken by number
 * and by symbol in the table's spelling (other spellings are refused, naming the place); Bad points may
 * carry any number, Good and Uncertain ones stay within ±1e100.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

let counter = 0;
async function series(): Promise<string> {
  const xid = `status-${counter++}`;
  expect((await h.post('/timeseries', { items: [{ externalId: xid }] })).status).toBe(201);
  return xid;
}

async function readAll(xid: string): Promise<Array<Record<string, any>>> {
  const res = await h.post('/timeseries/data/list', { items: [{ externalId: xid, start: 0, end: 10_000_000, limit: 100_000, includeStatus: true, ignoreBadDataPoints: false, treatUncertainAsBad: false }] });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.items[0].datapoints;
}

/**
 * The conditions (code >> 16) an official client's test fixtures write: a spread over the whole table, Good,
 * Uncertain and Bad.
 */
const FIXTURE_CONDITIONS = [
  0, 45, 46, 47, 48, 150, 162, 163, 167, 168, 169, 170, 186, 217, 220, 224, 278, 279, 280, 1026, 1027, 1032, 1033,
  16384, 16492, 16527, 16528, 16529, 16530, 16531, 16533, 16548, 16572, 16576, 16606, 16610, 16905, 16906, 16911,
  ...[[32768, 32808], [32810, 32812], [32817, 32875], [32877, 32910], [32919, 32923], [32925, 32929], [32939, 32953], [32968, 32984], [33037, 33045], [33049, 33055]].flatMap(
    ([a, b]) => Array.from({ length: b - a + 1 }, (_, i) => a + i),
  ),
];

describe('status codes', () => {
  it('takes every condition of the table by code, and by the symbol it answers with', async () => {
    expect(FIXTURE_CONDITIONS.length).toBe(234);
    const byCode = await series();
    const points = FIXTURE_CONDITIONS.map((c, i) => ({ timestamp: i + 1, value: i, status: { code: c * 65536 } }));
    const res = await h.post('/timeseries/data', { items: [{ externalId: byCode, datapoints: points }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const read = await readAll(byCode);
    expect(read.map((p) => p.status?.code ?? 0)).toEqual(FIXTURE_CONDITIONS.map((c) => c * 65536));
    // The symbols read back name the same codes when written.
    const bySymbol = await series();
    const symbols = read.map((p) => p.status?.symbol ?? 'Good');
    expect(new Set(symbols).size).toBe(234);
    const again = await h.post('/timeseries/data', { items: [{ externalId: bySymbol, datapoints: symbols.map((symbol, i) => ({ timestamp: i + 1, value: i, status: { symbol } })) }] });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect((await readAll(bySymbol)).map((p) => p.status?.code ?? 0)).toEqual(FIXTURE_CONDITIONS.map((c) => c * 65536));
  });

  it('names conditions as the table spells them, flags after them', async () => {
    const xid = await series();
    const known: Array<[number, string]> = [
      [10682368, 'GoodEntryReplaced'],
      [3145728, 'GoodClamped'],
      [1083244544, 'UncertainSubstituteValue'],
      [2149122048, 'BadCertificateIssuerUseNotAllowed'],
      [2152071168, 'BadStructureMissing'],
      [67239936, 'GoodCascadeInitializationRequest'],
      [2165309440, 'BadLicenseNotAvailable'],
      [2154168320, 'BadDuplicateReferenceNotAllowed'],
      [0x80b20000, 'BadWaitingForResponse'],
      [0x406c0000, 'UncertainReferenceOutOfServer'],
      [0x01180000, 'GoodEdited_DominantValueChanged_DependentValueChanged'],
      [0x80520000, 'BadSempahoreFileMissing'],
      [0x00000501, 'Good, Low, Calculated'],
      [0x4000c602, 'Uncertain, StructureChanged, SemanticsChanged, High, Interpolated'],
      [0x808c0494, 'BadSensorFailure, Overflow, MultiValue, Partial'],
    ];
    const res = await h.post('/timeseries/data', { items: [{ externalId: xid, datapoints: known.map(([code, symbol], i) => ({ timestamp: i + 1, value: 1, status: { code, symbol } })) }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await readAll(xid)).map((p) => [p.status.code, p.status.symbol])).toEqual(known);
  });

  it('refuses other spellings of a symbol, naming the place and the spelling to use', async () => {
    const xid = await series();
    const cases: Array<[string, RegExp]> = [
      ['badsensorfailure', /"badsensorfailure" is not a known status symbol: names are case-sensitive; did you mean "BadSensorFailure"\?/],
      ['BAD', /did you mean "Bad"\?/],
      ['Bad_SensorFailure', /did you mean "BadSensorFailure"\?/],
      ['GoodEditedDependentValueChanged', /did you mean "GoodEdited_DependentValueChanged"\?/],
      ['Good, low', /"low" is not a flag; did you mean "Low"\?/],
      ['Good, Fine', /"Fine" is not a flag \(flags: StructureChanged,/],
      ['Good, Low, High', /the flag "High" conflicts with an earlier one/],
      ['Good, Calculated, Interpolated', /the flag "Interpolated" conflicts with an earlier one/],
      ['Fine', /"Fine" is not a known status symbol$/],
      ['', /"" is not a known status symbol$/],
    ];
    for (const [symbol, message] of cases) {
      const res = await h.post('/timeseries/data', { items: [{ externalId: xid, datapoints: [{ timestamp: 1, value: 1 }, { timestamp: 2, value: 1, status: { symbol } }] }] });
      expect(errorMessage(res, 400), symbol).toMatch(new RegExp(`^items\\[0\\]\\.datapoints\\[1\\]\\.status\\.symbol: .*${message.source}`));
    }
    expect(await readAll(xid)).toEqual([]);
  });

  it('refuses codes outside the table or with reserved bits', async () => {
    const xid = await series();
    const cases: Array<[number, RegExp]> = [
      [0x80290000, /0x80290000 is not a known status code/],
      [0x00a40000, /0x00A40000 is not a known status code/],
      [0xc0000000, /reserved severity bits 11/],
      [0x00001000, /sets reserved bits/],
      [0x00000001, /sets value flags without the data-value info type/],
      [0x00000403, /sets reserved value flags/],
      [2 ** 32, /must be an unsigned 32-bit integer/],
    ];
    for (const [code, message] of cases) {
      const res = await h.post('/timeseries/data', { items: [{ externalId: xid, datapoints: [{ timestamp: 2, value: 1, status: { code } }] }] });
      expect(errorMessage(res, 400), String(code)).toMatch(new RegExp(`^items\\[0\\]\\.datapoints\\[0\\]\\.status\\.code: .*${message.source}`));
    }
  });
});

describe('values', () => {
  it('of Bad points may be any number, or NaN, Infinity, -Infinity, or left out', async () => {
    const xid = await series();
    const values = [1e100, -1e100, 1e300, -Number.MAX_VALUE, 5e-324, 2.71, 'NaN', 'Infinity', '-Infinity', undefined];
    const res = await h.post('/timeseries/data', {
      items: [{ externalId: xid, datapoints: values.map((value, i) => ({ timestamp: i + 1, ...(value === undefined ? {} : { value }), status: { symbol: 'BadSensorFailure' } })) }],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await readAll(xid)).map((p) => p.value)).toEqual(values);
  });

  it('of Good and Uncertain points lie strictly between -1e100 and 1e100', async () => {
    const xid = await series();
    for (const status of [undefined, { symbol: 'Uncertain' }, { symbol: 'GoodClamped' }]) {
      for (const value of [1e100, -1e100, 1e300]) {
        const res = await h.post('/timeseries/data', { items: [{ externalId: xid, datapoints: [{ timestamp: 1, value, ...(status ? { status } : {}) }] }] });
        expect(errorMessage(res, 400)).toMatch(/^items\[0\]\.datapoints\[0\]\.value: must be greater than -1e100 and less than 1e100 \(a point with a Bad status may carry any number\)/);
      }
    }
    const ok = await h.post('/timeseries/data', { items: [{ externalId: xid, datapoints: [{ timestamp: 1, value: 9.99e99 }, { timestamp: 2, value: -9.99e99, status: { symbol: 'Uncertain' } }] }] });
    expect(ok.status).toBe(200);
  });
});
