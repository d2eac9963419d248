/**
 * SAP writeback mappings in the Cognite mapping language, over HTTP: a mapping's expression is checked when
 * it is created (a bad one is a 400 naming `items[i].expression` with its line and column, and nothing is
 * created); a request to an endpoint with a mapping sends what the mapping makes of each payload, and an
 * evaluation error, a result that is not an object, or a runaway expression fails that record. A table of
 * expressions and their results is driven through mappings too: the gateway the test starts receives them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, startHarness, type Harness } from './support/harness.js';
import { jobsDone } from './support/jobs.js';
import { SAP_PASSWORD, SAP_USER, startSapGateway, type SapGateway } from './support/sap-gateway.js';

const WB = '/writeback/sap';
let h: Harness;
let sap: SapGateway;

beforeAll(async () => {
  sap = await startSapGateway();
  h = await startHarness({}, { STRATA_OUTBOUND_ALLOW: 'loopback' });
  const res = await h.post(`${WB}/instances`, { items: [{ externalId: 'sap', gatewayUrl: sap.url, client: 100, username: SAP_USER, password: SAP_PASSWORD }] });
  expect(res.status).toBe(200);
});
afterAll(async () => {
  await h.close();
  await sap.close();
});

/** Creates a mapping and a notification endpoint using it, both named `name`. */
async function mappedEndpoint(name: string, expression: string, endpointType = 'notification') {
  const mapping = await h.post(`${WB}/mappings`, { items: [{ externalId: name, expression }] });
  expect(mapping.status, JSON.stringify(mapping.body)).toBe(200);
  const endpoint = await h.post(`${WB}/endpoints`, { items: [{ externalId: name, endpointType, instanceId: 'sap', mappingId: name }] });
  expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(200);
}

/** Sends a request to `endpointId` and waits for it to end; the request as read by id, and what the gateway received. */
async function sent(endpointId: string, request: unknown[]) {
  const received = sap.received.length;
  const res = await h.post(`${WB}/requests`, { items: [{ endpointId, request }] });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  await jobsDone(h);
  const read = await h.post(`${WB}/requests/byids`, { items: [{ requestId: res.body.items[0].requestId }] });
  return { request: read.body.items[0], received: sap.received.slice(received) };
}

const json = (r: { body: Buffer }) => JSON.parse(r.body.toString());

describe('creating a mapping', () => {
  it('accepts expressions of the language, kept as given', async () => {
    const expression = '\n{\n "NotificationText": substring(input.text,0,40), \n "Priority": input.priority, \n}\n';
    const res = await h.post(`${WB}/mappings`, { items: [{ externalId: 'example', expression }, { externalId: 'lambdas', expression: 'input.items.map((x, i) => { "n": x * i }).filter(x => x.n > 0)' }] });
    expect(res.status).toBe(200);
    expect(res.body.items.map((m: { expression: string }) => m.expression)).toEqual([expression, 'input.items.map((x, i) => { "n": x * i }).filter(x => x.n > 0)']);
  });

  it('refuses a bad expression, naming the item, the line and the column, and creates none of the items', async () => {
    const before = (await h.get(`${WB}/mappings`)).body.items.length;
    const cases: Array<[string, RegExp]> = [
      ['{\n  "a": input.x +\n}', /items\[1\]\.expression: line 3, column 1: expected a value, found "}"/],
      ['{ "a": nosuch(input) }', /items\[1\]\.expression: line 1, column 8: unknown function "nosuch"/],
      ['{ "a": x }', /items\[1\]\.expression: line 1, column 8: unknown variable "x"/],
      ['substring(input.a)', /items\[1\]\.expression: line 1, column 1: substring takes 2 to 3 arguments, given 1/],
      ['input.list.map(2)', /items\[1\]\.expression: line 1, column 16: argument 2 of map is a function/],
      ['"not closed', /items\[1\]\.expression: line 1, column 1: a string is not closed/],
      ['{ "a": 1 "b": 2 }', /items\[1\]\.expression: line 1, column 10: expected "," or "}", found the string "b"/],
      ['1e999', /items\[1\]\.expression: line 1, column 1: the number 1e999 is too large/],
      ['input input', /items\[1\]\.expression: line 1, column 7: expected the end of the expression/],
      ['input is thing', /items\[1\]\.expression: line 1, column 10: expected a type after "is"/],
      ['['.repeat(150), /items\[1\]\.expression: .*nests deeper than 100 levels/],
    ];
    for (const [expression, message] of cases) {
      const res = await h.post(`${WB}/mappings`, { items: [{ externalId: 'fine', expression: 'input' }, { externalId: 'bad', expression }] });
      expect(errorMessage(res, 400), expression).toMatch(message);
    }
    expect((await h.get(`${WB}/mappings`)).body.items).toHaveLength(before);
  });
});

describe('a request through a mapping', () => {
  beforeAll(async () => {
    await mappedEndpoint('reshape', '{ "NotificationText": concat(upper(input.site), ": ", input.text), "Priority": string(int(input.level) + 1), }');
    await mappedEndpoint('scalar', 'input.text');
    await mappedEndpoint('runaway', '{ "NotificationText": "x", "n": input.list.map(a => input.list.map(b => input.list.map(c => input.list.map(d => a + b + c + d)))) }');
    await mappedEndpoint('doubling', '{ "NotificationText": "x", "s": input.list.reduce((acc, v) => concat(acc, acc, acc, acc, acc, acc, acc, acc), "ab") }');
    await mappedEndpoint('deep', '{ "NotificationText": "x", "v": input.list.reduce((acc, v) => [acc], null) }');
    await mappedEndpoint('long-args', '{ "NotificationText": "x", "n": input.list.map(x => starts_with(input.text, input.text)) }');
    await mappedEndpoint('spread', '{ "NotificationText": "x", "n": [...input.list, ...input.list] }');
    await mappedEndpoint('doc-headers', '{ "BusinessObjectTypeName": "PMQMEL", "LinkedSAPObjectKey": string(input.key) }', 'attachment');
  });

  it('sends what the mapping makes of each payload, and keeps the payload as given', async () => {
    const { request, received } = await sent('reshape', [
      { key: 'a', payload: { site: 'north', text: 'Pump leaks', level: '2' } },
      { key: 'b', payload: { site: 'south', text: 'Valve stuck', level: 0 } },
    ]);
    expect(request).toMatchObject({ status: 'done', request: [{ key: 'a', payload: { site: 'north', text: 'Pump leaks', level: '2' } }, { key: 'b' }] });
    expect(received.map(json)).toEqual([
      { NotificationText: 'NORTH: Pump leaks', Priority: '3' },
      { NotificationText: 'SOUTH: Valve stuck', Priority: '1' },
    ]);
  });

  it('fails the record whose evaluation fails, with the message; the records before it are sent', async () => {
    const { request, received } = await sent('reshape', [
      { payload: { site: 'east', text: 'Fine', level: 1 } },
      { payload: { site: 'west', text: 'Broken', level: 'high' } },
      { payload: { site: 'west', text: 'Not sent', level: 1 } },
    ]);
    expect(request.status).toBe('failed');
    expect(request.errorMessage).toMatch(/^request\[1\]: the mapping "reshape" failed: line 1, column 87: int cannot convert high \(string\)$/);
    expect(received.map(json)).toEqual([{ NotificationText: 'EAST: Fine', Priority: '2' }]);
  });

  it('fails a record the mapping makes into something that is not an object', async () => {
    const { request, received } = await sent('scalar', [{ payload: { text: 'just text' } }]);
    expect(request).toMatchObject({ status: 'failed', errorMessage: 'request[0]: the mapping "scalar" made a string, not an object' });
    expect(received).toEqual([]);
  });

  it('stops a runaway expression, failing its record, and the server goes on answering', async () => {
    const list = Array.from({ length: 100 }, (_, i) => i);
    const { request, received } = await sent('runaway', [{ payload: { list } }]);
    expect(request.status).toBe('failed');
    expect(request.errorMessage).toMatch(/^request\[0\]: the mapping "runaway" failed: line 1, column \d+: .*(more work than it may|more than 100000 items)/);
    expect(received).toEqual([]);
    const doubling = await sent('doubling', [{ payload: { list } }]);
    expect(doubling.request.errorMessage).toMatch(/^request\[0\]: the mapping "doubling" failed: line 1, column \d+: a string would have more than 1000000 characters$/);
    expect(doubling.received).toEqual([]);
    const deep = await sent('deep', [{ payload: { list: Array.from({ length: 5000 }, () => 0) } }]);
    expect(deep.request.errorMessage).toBe('request[0]: the mapping "deep" failed: the result: a value nests deeper than 1000 levels');
    expect((await h.get(`${WB}/mappings`)).status).toBe(200);
  });

  it('counts the characters and elements a function is given as work, and spreads arrays of any length', async () => {
    const text = 'x'.repeat(100_000);
    const long = await sent('long-args', [{ payload: { text, list: Array.from({ length: 100 }, (_, i) => i) } }]);
    expect(long.request.errorMessage).toMatch(/^request\[0\]: the mapping "long-args" failed: line 1, column \d+: the mapping did more work than it may/);
    const spread = await sent('spread', [{ payload: { list: Array.from({ length: 200_000 }, () => 0) } }]);
    expect(spread.request.errorMessage).toMatch(/^request\[0\]: the mapping "spread" failed: line 1, column \d+: .*more than 100000 items/);
  });

  it('to an attachment endpoint sends the mapped payload as headers', async () => {
    const created = await h.post('/files', { externalId: 'doc', name: 'doc.pdf', mimeType: 'application/pdf' });
    const { pathname, search } = new URL(created.body.uploadUrl);
    await h.strata.app.inject({ method: 'PUT', url: pathname + search, payload: Buffer.from('%PDF'), headers: { 'content-type': 'application/pdf' } });
    // The payload as given need not be headers: the mapping's result is what is checked, when it is sent.
    const { request, received } = await sent('doc-headers', [{ fileId: 'doc', payload: { key: 10000042, note: ['any', 'shape'] } }]);
    expect(request.status).toBe('done');
    expect(received[0].headers).toMatchObject({ businessobjecttypename: 'PMQMEL', linkedsapobjectkey: '10000042' });
  });
});

/** Expression → the value it makes of INPUT. */
const INPUT = { a: { b: 5, 'with space': 'x' }, list: [1, 2, 3], text: '  Hello World  ', when: '2023-05-01 12:43:23', n: '42', nested: [[1, 2], [3]] };
const TABLE: Array<[string, unknown]> = [
  // Literals, objects, arrays, paths
  ['1.5', 1.5],
  ['"double" == \'double\'', true],
  ['[true, false, null,]', [true, false, null]],
  ['{ "k": 1, concat("dyn", "amic"): 2, }', { k: 1, dynamic: 2 }],
  ['input.a.b', 5],
  ['input["a"]["with space"]', 'x'],
  ['input.a.`with space`', 'x'],
  ['input.list[2]', 3],
  ['input.list[7]', null],
  ['input.nope.deeper', null],
  ['[...input.list, 4]', [1, 2, 3, 4]],
  ['{ ...input.a, "b": 6 }', { b: 6, 'with space': 'x' }],
  ['{ "__proto__": 1 }.length()', 1],
  ['join({}, parse_json("{\\"__proto__\\": 2}")).__proto__', 2],
  // Operators and precedence
  ['1 + 2 * 3', 7],
  ['(1 + 2) * 3', 9],
  ['10 - 4 - 3', 3],
  ['7 / 2', 3.5],
  ['7 % 4', 3],
  ['-input.a.b + 1', -4],
  ['1 + 1 == 2 && 3 > 2', true],
  ['false || !false', true],
  ['1 < 2 == true', true],
  ['2 >= 2 && 2 <= 1', false],
  ['[1, [2]] != [1, [2]]', false],
  ['input.a.b is int', true],
  ['1.5 is float', true],
  ['input.text is "string"', true],
  ['null is not null', false],
  ['input.list is array && input.a is object', true],
  // Conditionals and lambdas
  ['if input.a.b > 3 { "big" } else { "small" }', 'big'],
  ['if false { 1 } else if input.a.b == 5 { 2 } else { 3 }', 2],
  ['if false { 1 }', null],
  ['if(input.a.b == 5, "five")', 'five'],
  ['input.list.map(x => x * 2)', [2, 4, 6]],
  ['input.list.map((x, i) => i)', [0, 1, 2]],
  ['{"a": 1, "b": 2}.map((v, k) => concat(k, v))', { a: 'a1', b: 'b2' }],
  ['input.list.filter(x => x > 1)', [2, 3]],
  ['input.list.reduce((acc, x) => acc + x, 10)', 16],
  ['input.nested.flatmap(l => l.map(x => x + 1))', [2, 3, 4]],
  ['zip([1, 2], ["a", "b", "c"], (n, s) => concat(n, s))', ['1a', '2b', 'c']],
  ['input.list.to_object(v => string(v), v => v * v)', { 1: 1, 2: 4, 3: 9 }],
  ['{"a": 1, "b": 2}.pairs()', [{ key: 'a', value: 1 }, { key: 'b', value: 2 }]],
  ['[1, 2, 3, 4].distinct_by(x => x % 2)', [1, 2]],
  ['input.a.select(["b"])', { b: 5 }],
  ['{"a": 1, "b": 2, "c": 3}.except((v, k) => v > 1)', { a: 1 }],
  ['[1, 2, 3].select(x => x != 2)', [1, 3]],
  ['input.missing.if_value(x => x + 1)', null],
  ['input.a.b.if_value(x => x + 1)', 6],
  ['coalesce(input.missing, null, "fallback")', 'fallback'],
  ['case("b", "a", 1, "b", 2, 0)', 2],
  ['case("z", "a", 1, 0)', 0],
  // Strings
  ['concat("a", 1, true, null)', 'a1true'],
  ['substring("hello world", 3, 8)', 'lo wo'],
  ['"hello world".substring(0, -3)', 'hello wo'],
  ['length(input.text)', 15],
  ['input.text.trim_whitespace().lower()', 'hello world'],
  ['upper(true)', 'TRUE'],
  ['"a,b,c".split(",")', ['a', 'b', 'c']],
  ['"ab".split("")', ['', 'a', 'b', '']],
  ['replace("potato", "o", "a")', 'patata'],
  ['["x", 1, true].string_join("-")', 'x-1-true'],
  ['"hello".starts_with("he") && "hello".ends_with("lo") && "hello".contains("ll")', true],
  ['"test".chars()', ['t', 'e', 's', 't']],
  ['"hello world".translate("he", "HE")', 'HEllo world'],
  ['string(null)', ''],
  ['string({"a": [1]})', '{"a":[1]}'],
  ['parse_json("{\\"a\\": [1, 2]}").a[1]', 2],
  // Conversions
  ['int(input.n) + 1', 43],
  ['float("6.25")', 6.25],
  ['try_int("six", -1)', -1],
  ['try_float("4,5", null)', 4.5],
  ['try_bool("TRUE", null)', true],
  ['try_bool("maybe", false)', false],
  // Arrays, objects, math
  ['join({"a": 1}, {"b": 2}, {"a": 3})', { a: 3, b: 2 }],
  ['join([1], [2, 3])', [1, 2, 3]],
  ['[1, 2, 3, 4].contains(4)', true],
  ['chunk([1, 2, 3, 4, 5], 2)', [[1, 2], [3, 4], [5]]],
  ['[1, 2, 3, 4].slice(1, 3)', [2, 3]],
  ['[1, 2, 3].tail()', 3],
  ['[1, 2, 3].tail(2)', [2, 3]],
  ['length(input.a)', 2],
  ['[true, true].all() && [false, true].any()', true],
  ['[1, 8, 3].max() + min(4, 2)', 10],
  ['[1, 2, 3, 4].sum()', 10],
  ['pow(2, 10) + sqrt(16) + floor(1.7) + ceil(1.2) + round(2.5)', 1034],
  ['log(16, 2)', 4],
  ['atan2(0, 1)', 0],
  // Time
  ['to_unix_timestamp(input.when, "%Y-%m-%d %H:%M:%S")', 1682945003000],
  ['to_unix_timestamp("2023-05-01T12:43:23.250+01:00", "%Y-%m-%dT%H:%M:%S%.3f%z")', 1682941403250],
  ['format_timestamp(1694159249120, "%Y-%m-%d %H:%M:%S")', '2023-09-08 07:47:29'],
  ['format_timestamp(1694159249120, "%d/%m - %Y %T%.3f")', '08/09 - 2023 07:47:29.120'],
  ['now() > 1600000000000', true],
  // Comments
  ['/* block */ 1 + // line\n 1', 2],
];

describe('the language', () => {
  it('evaluates each expression of the table to its value, as the gateway receives it', async () => {
    // As few mappings as fit the 2000 characters a mapping may have: { "NotificationText": "t", "c<i>": <expression>, ... }.
    const groups: Array<Array<[number, string]>> = [[]];
    let size = 0;
    for (const [i, [expression]] of TABLE.entries()) {
      const entry = `"c${i}": ${expression},\n`;
      if (size + entry.length > 1900) {
        groups.push([]);
        size = 0;
      }
      groups.at(-1)!.push([i, expression]);
      size += entry.length;
    }
    for (const [g, group] of groups.entries()) {
      await mappedEndpoint(`table-${g}`, `{ "NotificationText": "t",\n${group.map(([i, e]) => `"c${i}": ${e},\n`).join('')}}`);
      const { request, received } = await sent(`table-${g}`, [{ payload: INPUT }]);
      expect(request.status, request.errorMessage).toBe('done');
      const got = json(received[0]);
      for (const [i, expression] of group) expect(got[`c${i}`], expression).toEqual(TABLE[i][1]);
    }
  });

  it('fails evaluation with the line and column of what failed', async () => {
    await mappedEndpoint('errors', '{ "NotificationText": "t",\n  "x": input.list.map(x => x / (x - 2)) }');
    const { request } = await sent('errors', [{ payload: INPUT }]);
    expect(request.errorMessage).toBe('request[0]: the mapping "errors" failed: line 2, column 30: division by zero');
  });
});
