/**
 * Spaces, containers, views and data models over HTTP: apply, list, by ids, delete, and the rules each
 * refuses (in the spec's error shape, changing nothing), on the store the project runs on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/storage/sql.js';
import { errorMessage, startHarness, type Harness } from '../support/harness.js';
import { databaseIndexes, jobsDone } from '../support/jobs.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const C = (space: string, externalId: string) => ({ type: 'container', space, externalId });
const V = (space: string, externalId: string, version: string) => ({ type: 'view', space, externalId, version });
const map = (container: ReturnType<typeof C>, p: string) => ({ container, containerPropertyIdentifier: p });

async function ok(path: string, body: unknown) {
  const res = await h.post(path, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

describe('spaces', () => {
  it('creates, updates only on change, lists with a cursor, reads by ids leaving out unknown ones', async () => {
    const [a] = (await ok('/models/spaces', { items: [{ space: 'sp-a', name: 'A' }] })).items;
    expect(a).toMatchObject({ space: 'sp-a', name: 'A', isGlobal: false });
    const [same] = (await ok('/models/spaces', { items: [{ space: 'sp-a', name: 'A' }] })).items;
    expect(same.lastUpdatedTime).toBe(a.lastUpdatedTime);
    await ok('/models/spaces', { items: [{ space: 'sp-b' }, { space: 'sp-c' }] });
    const page1 = await h.get('/models/spaces?limit=2');
    expect(page1.body.items).toHaveLength(2);
    const page2 = await h.get(`/models/spaces?limit=2&cursor=${page1.body.nextCursor}`);
    const all = [...page1.body.items, ...page2.body.items].map((s: any) => s.space);
    expect(all).toEqual(expect.arrayContaining(['sp-a', 'sp-b', 'sp-c']));
    expect(new Set(all).size).toBe(all.length);
    const byIds = await ok('/models/spaces/byids', { items: [{ space: 'sp-b' }, { space: 'nope' }] });
    expect(byIds.items.map((s: any) => s.space)).toEqual(['sp-b']);
  });

  it('refuses reserved, system and malformed spaces, and duplicates, creating none', async () => {
    expect(errorMessage(await h.post('/models/spaces', { items: [{ space: 'ok-1' }, { space: 'system' }] }), 400)).toMatch(/items\[1\]\.space.*reserved/);
    expect(errorMessage(await h.post('/models/spaces', { items: [{ space: 'cdf_cdm' }] }), 400)).toMatch(/cdf_/);
    expect(errorMessage(await h.post('/models/spaces', { items: [{ space: '1bad' }] }), 400)).toMatch(/items\/0\/space|items\[0\]\.space/);
    const dup = await h.post('/models/spaces', { items: [{ space: 'dup' }, { space: 'dup' }] });
    expect(errorMessage(dup, 400)).toBeTruthy();
    expect(dup.body.error.duplicated).toEqual([{ space: 'dup' }]);
    expect((await ok('/models/spaces/byids', { items: [{ space: 'ok-1' }, { space: 'dup' }] })).items).toEqual([]);
    const tooMany = await h.post('/models/spaces', { items: Array.from({ length: 101 }, (_, i) => ({ space: `s${i}` })) });
    expect(errorMessage(tooMany, 400)).toMatch(/100/);
  });

  it('refuses to delete a space that still holds schema or instances, and deletes an empty one', async () => {
    await ok('/models/spaces', { items: [{ space: 'full' }, { space: 'empty' }] });
    await ok('/models/containers', { items: [{ space: 'full', externalId: 'Thing', properties: { x: { type: { type: 'int32' } } } }] });
    const refused = await h.post('/models/spaces/delete', { items: [{ space: 'empty' }, { space: 'full' }] });
    expect(errorMessage(refused, 400)).toMatch(/"full" still holds 1 container/);
    expect((await ok('/models/spaces/byids', { items: [{ space: 'empty' }] })).items).toHaveLength(1);
    expect((await ok('/models/spaces/delete', { items: [{ space: 'empty' }, { space: 'never' }] })).items).toEqual([{ space: 'empty' }]);
    expect((await ok('/models/spaces/byids', { items: [{ space: 'empty' }] })).items).toEqual([]);
  });
});

describe('containers', () => {
  beforeAll(async () => {
    await ok('/models/spaces', { items: [{ space: 'plant' }] });
  });

  it('applies properties of every type and reads them back in the reference form', async () => {
    const properties = {
      name: { type: { type: 'text', collation: 'en', maxTextSize: 100 }, nullable: false },
      tags: { type: { type: 'text', list: true, maxListSize: 10 } },
      on: { type: { type: 'boolean' }, defaultValue: false },
      f32: { type: { type: 'float32' } },
      f64: { type: { type: 'float64', unit: { externalId: 'temperature:deg_c' } } },
      i32: { type: { type: 'int32' }, immutable: true },
      i64: { type: { type: 'int64' }, autoIncrement: true },
      at: { type: { type: 'timestamp' } },
      day: { type: { type: 'date' } },
      doc: { type: { type: 'json' } },
      state: { type: { type: 'enum', values: { open: {}, closed: { name: 'Closed' } }, unknownValue: 'open' } },
      parent: { type: { type: 'direct' } },
      series: { type: { type: 'timeseries', list: true } },
      file: { type: { type: 'file' } },
      sequenceRef: { type: { type: 'sequence' } },
    };
    const [c] = (await ok('/models/containers', { items: [{ space: 'plant', externalId: 'Everything', properties, indexes: { byName: { properties: ['name'], cursorable: true } } }] })).items;
    expect(Object.keys(c.properties).sort()).toEqual(Object.keys(properties).sort());
    expect(c.properties.name).toMatchObject({ type: { type: 'text', list: false, collation: 'en', maxTextSize: 100 }, nullable: false, constraintState: { nullability: 'current' } });
    expect(c.properties.tags.type).toEqual({ type: 'text', list: true, maxListSize: 10, collation: 'ucs_basic' });
    expect(c.properties.on.defaultValue).toBe(false);
    expect(c.indexes.byName).toEqual({ indexType: 'btree', properties: ['name'], cursorable: true, state: 'current' });
    const [again] = (await ok('/models/containers/byids', { items: [{ space: 'plant', externalId: 'Everything' }, { space: 'plant', externalId: 'Nope' }] })).items;
    expect(again).toEqual(c);
  });

  it('refuses a container in a space that does not exist, naming it', async () => {
    const res = await h.post('/models/containers', { items: [{ space: 'ghost', externalId: 'X', properties: { a: { type: { type: 'int32' } } } }] });
    expect(errorMessage(res, 400)).toMatch(/spaces do not exist: ghost/);
    expect(res.body.error.missing).toEqual([{ space: 'ghost' }]);
  });

  it('follows the change rules: new properties, indexes and constraints are allowed, type and usedFor changes are 409', async () => {
    await ok('/models/containers', { items: [{ space: 'plant', externalId: 'Pump', properties: { p: { type: { type: 'float64' } } } }] });
    const changed = await h.post('/models/containers', { items: [{ space: 'plant', externalId: 'Pump', properties: { p: { type: { type: 'int64' } } } }] });
    expect(errorMessage(changed, 409)).toMatch(/items\[0\]\.properties\.p\.type: the type of an existing property cannot change/);
    const usedFor = await h.post('/models/containers', { items: [{ space: 'plant', externalId: 'Pump', usedFor: 'edge', properties: { p: { type: { type: 'float64' } } } }] });
    expect(errorMessage(usedFor, 409)).toMatch(/usedFor/);
    const [grown] = (
      await ok('/models/containers', {
        items: [
          {
            space: 'plant',
            externalId: 'Pump',
            properties: { q: { type: { type: 'text' } } },
            indexes: { byQ: { properties: ['q'] } },
            constraints: { u: { constraintType: 'uniqueness', properties: ['p'] } },
          },
        ],
      })
    ).items;
    expect(Object.keys(grown.properties).sort()).toEqual(['p', 'q']);
    // Checked against the stored instances after the apply: pending until then.
    expect([grown.indexes.byQ.state, grown.constraints.u.state]).toEqual(['pending', 'pending']);
    await jobsDone(h);
    const [read] = (await ok('/models/containers/byids', { items: [{ space: 'plant', externalId: 'Pump' }] })).items;
    expect([read.indexes.byQ.state, read.constraints.u.state]).toEqual(['current', 'current']);
    // An inverted index has no database index to build: current at once.
    const [listed] = (
      await ok('/models/containers', {
        items: [{ space: 'plant', externalId: 'Pump', properties: { tags: { type: { type: 'text', list: true } } }, indexes: { byTags: { indexType: 'inverted', properties: ['tags'] } } }],
      })
    ).items;
    expect(listed.indexes.byTags.state).toBe('current');
    const indexes = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`x${i}`, { properties: ['q'] }]));
    const tooMany = await h.post('/models/containers', { items: [{ space: 'plant', externalId: 'Pump', properties: { q: { type: { type: 'text' } } }, indexes }] });
    expect(errorMessage(tooMany, 400)).toMatch(/^items\[0\]\.indexes: a container has at most 10 indexes, got 11/);
  });

  it('builds a uniqueness constraint added to a container that holds data: failed while stored instances share values, new values unique all the same, current once a retry finds them unique', async () => {
    await ok('/models/containers', { items: [{ space: 'plant', externalId: 'Tag', properties: { code: { type: { type: 'text' } } } }] });
    const tag = (externalId: string, code: string) => ({ instanceType: 'node', space: 'plant', externalId, sources: [{ source: C('plant', 'Tag'), properties: { code } }] });
    await ok('/models/instances', { items: [tag('t1', 'A'), tag('t2', 'A'), tag('t3', 'B')] });
    const unique = { space: 'plant', externalId: 'Tag', properties: { code: { type: { type: 'text' } } }, constraints: { code: { properties: ['code'] } } };
    expect((await ok('/models/containers', { items: [unique] })).items[0].constraints.code.state).toBe('pending');
    await jobsDone(h);
    const state = async () => (await ok('/models/containers/byids', { items: [{ space: 'plant', externalId: 'Tag' }] })).items[0].constraints.code.state;
    expect(await state()).toBe('failed');
    // Failed, it still refuses a value another instance has, whether shared already or not, also within the request.
    const taken = /uniqueness constraint "code" of the container plant:Tag is violated/;
    expect(errorMessage(await h.post('/models/instances', { items: [tag('t4', 'A')] }), 409)).toMatch(taken);
    expect(errorMessage(await h.post('/models/instances', { items: [tag('t4', 'B')] }), 409)).toMatch(taken);
    expect(errorMessage(await h.post('/models/instances', { items: [tag('t4', 'D'), tag('t5', 'D')] }), 409)).toMatch(taken);
    expect(errorMessage(await h.post('/models/instances', { items: [tag('t3', 'A')] }), 409)).toMatch(taken);
    // A value kept as it was, and a new value no other instance has, are fine; nothing of the refused writes is there.
    await ok('/models/instances', { items: [tag('t1', 'A'), tag('t2', 'C')] });
    const holding = await ok('/models/instances/list', { instanceType: 'node', filter: { hasData: [C('plant', 'Tag')] }, limit: 10 });
    expect(holding.items.map((i: any) => i.externalId).sort()).toEqual(['t1', 't2', 't3']);
    // A retry builds it again: the values are unique now (t3 kept B).
    const retried = await ok('/models/containers/constraints/retry', { items: [{ space: 'plant', containerExternalId: 'Tag', identifier: 'code' }] });
    expect(retried.items).toHaveLength(1);
    await jobsDone(h);
    expect(await state()).toBe('current');
    expect(errorMessage(await h.post('/models/instances', { items: [tag('t4', 'B')] }), 409)).toMatch(/uniqueness constraint "code" of the container plant:Tag/);
  });

  it('leaves no database index of an index deleted while it was pending', async () => {
    await ok('/models/containers', { items: [{ space: 'plant', externalId: 'Short', properties: { a: { type: { type: 'int32' } } } }] });
    await ok('/models/instances', { items: [{ instanceType: 'node', space: 'plant', externalId: 's1', sources: [{ source: C('plant', 'Short'), properties: { a: 1 } }] }] });
    const [added] = (await ok('/models/containers', { items: [{ space: 'plant', externalId: 'Short', properties: { a: { type: { type: 'int32' } } }, indexes: { ia: { properties: ['a'] } } }] })).items;
    expect(added.indexes.ia.state).toBe('pending');
    await ok('/models/containers/indexes/delete', { items: [{ space: 'plant', containerExternalId: 'Short', identifier: 'ia' }] });
    await jobsDone(h);
    expect((await ok('/models/containers/byids', { items: [{ space: 'plant', externalId: 'Short' }] })).items[0].indexes).toEqual({});
    const names = await databaseIndexes(h, 'dmc_');
    const [layout] = await h.strata.services.db.all<{ layout: string }>(sql`SELECT layout FROM dm_containers WHERE external_id = ${'Short'}`);
    const table = JSON.parse(layout.layout).table as string;
    // The indexes of a container's indexes and constraints are named `<table>_i<n>` and `<table>_u<n>`.
    expect(names.filter((n) => n.startsWith(`${table}_`) && /_[iu]\d+$/.test(n))).toEqual([]);
  });

  it('deletes an index and a constraint; unknown ones are left out', async () => {
    await ok('/models/containers', { items: [{ space: 'plant', externalId: 'Req', properties: { a: { type: { type: 'int32' } } } }] });
    await ok('/models/containers', {
      items: [
        {
          space: 'plant',
          externalId: 'Sub',
          properties: { a: { type: { type: 'int32' } } },
          indexes: { ia: { properties: ['a'] } },
          constraints: { needs: { constraintType: 'requires', require: C('plant', 'Req') } },
        },
      ],
    });
    const items = [{ space: 'plant', containerExternalId: 'Sub', identifier: 'ia' }, { space: 'plant', containerExternalId: 'Sub', identifier: 'nope' }];
    expect((await ok('/models/containers/indexes/delete', { items })).items).toEqual([items[0]]);
    expect((await ok('/models/containers/constraints/delete', { items: [{ space: 'plant', containerExternalId: 'Sub', identifier: 'needs' }] })).items).toHaveLength(1);
    const [sub] = (await ok('/models/containers/byids', { items: [{ space: 'plant', externalId: 'Sub' }] })).items;
    expect(sub.indexes).toEqual({});
    expect(sub.constraints).toEqual({});
  });

  it('retries revalidate a requires constraint and a nullability bound against the stored data', async () => {
    await ok('/models/containers', { items: [{ space: 'plant', externalId: 'Base', properties: { v: { type: { type: 'int32' } } } }] });
    await ok('/models/containers', { items: [{ space: 'plant', externalId: 'Extra', properties: { w: { type: { type: 'int32' } } } }] });
    await ok('/models/instances', { items: [{ instanceType: 'node', space: 'plant', externalId: 'lonely', sources: [{ source: C('plant', 'Extra'), properties: { w: 1 } }] }] });
    // The stored node has data in Extra but not in Base; the rules come after the data.
    const [extra] = (
      await ok('/models/containers', {
        items: [{ space: 'plant', externalId: 'Extra', properties: { w: { type: { type: 'int32' }, nullable: false } }, constraints: { base: { constraintType: 'requires', require: C('plant', 'Base') } } }],
      })
    ).items;
    expect([extra.constraints.base.state, extra.properties.w.constraintState]).toEqual(['pending', { nullability: 'pending' }]);
    await jobsDone(h);
    const read = async () => (await ok('/models/containers/byids', { items: [{ space: 'plant', externalId: 'Extra' }] })).items[0];
    expect((await read()).constraints.base.state).toBe('failed');
    await ok('/models/instances', { items: [{ instanceType: 'node', space: 'plant', externalId: 'lonely', sources: [{ source: C('plant', 'Base'), properties: { v: 2 } }] }] });
    await ok('/models/containers/constraints/retry', { items: [{ space: 'plant', containerExternalId: 'Extra', identifier: 'base' }] });
    await ok('/models/containers/properties/retry', { items: [{ space: 'plant', containerExternalId: 'Extra', identifier: 'w' }] });
    await jobsDone(h);
    const after = await read();
    expect(after.constraints.base.state).toBe('current');
    expect(after.properties.w.constraintState).toEqual({ nullability: 'current' });
    const unknown = await h.post('/models/containers/indexes/retry', { items: [{ space: 'plant', containerExternalId: 'Extra', identifier: 'none' }] });
    expect(errorMessage(unknown, 400)).toMatch(/none/);
    expect(unknown.body.error.missing).toHaveLength(1);
  });

  it('inspect counts the views that map a container', async () => {
    await ok('/models/containers', { items: [{ space: 'plant', externalId: 'Seen', properties: { a: { type: { type: 'int32' } } } }] });
    await ok('/models/views', {
      items: [
        { space: 'plant', externalId: 'SeenV', version: '1', properties: { a: map(C('plant', 'Seen'), 'a') } },
        { space: 'plant', externalId: 'SeenV', version: '2', properties: { a: map(C('plant', 'Seen'), 'a') } },
      ],
    });
    const res = await ok('/models/containers/inspect', {
      inspectionOperations: { involvedViews: { allVersions: true }, totalInvolvedViewCount: { allVersions: false } },
      items: [{ space: 'plant', externalId: 'Seen' }],
    });
    expect(res.items[0].inspectionResults.involvedViews).toHaveLength(2);
    expect(res.items[0].inspectionResults.involvedViewCount).toBe(1);
  });

  it('refuses to delete a container another one requires, unless both go or the constraint goes first', async () => {
    await ok('/models/containers', { items: [{ space: 'plant', externalId: 'Needed', properties: { a: { type: { type: 'int32' } } } }] });
    await ok('/models/containers', {
      items: [{ space: 'plant', externalId: 'Needing', properties: { b: { type: { type: 'int32' } } }, constraints: { needs: { constraintType: 'requires', require: C('plant', 'Needed') } } }],
    });
    const refused = await h.post('/models/containers/delete', { items: [{ space: 'plant', externalId: 'Needed' }] });
    expect(errorMessage(refused, 400)).toMatch(/items\[0\]: the container plant:Needed is required by the constraint "needs" of the container plant:Needing/);
    expect((await ok('/models/containers/byids', { items: [{ space: 'plant', externalId: 'Needed' }] })).items).toHaveLength(1);
    await ok('/models/containers/constraints/delete', { items: [{ space: 'plant', containerExternalId: 'Needing', identifier: 'needs' }] });
    expect((await ok('/models/containers/delete', { items: [{ space: 'plant', externalId: 'Needed' }] })).items).toEqual([{ space: 'plant', externalId: 'Needed' }]);
    await ok('/models/containers', { items: [{ space: 'plant', externalId: 'Needed', properties: { a: { type: { type: 'int32' } } } }] });
    await ok('/models/containers', {
      items: [{ space: 'plant', externalId: 'Needing', properties: { b: { type: { type: 'int32' } } }, constraints: { again: { constraintType: 'requires', require: C('plant', 'Needed') } } }],
    });
    const both = await ok('/models/containers/delete', { items: [{ space: 'plant', externalId: 'Needed' }, { space: 'plant', externalId: 'Needing' }] });
    expect(both.items).toHaveLength(2);
  });

  it('deleting a container drops its data; a container applied again under the name starts empty', async () => {
    await ok('/models/containers', { items: [{ space: 'plant', externalId: 'Gone', properties: { a: { type: { type: 'int32' } } } }] });
    await ok('/models/instances', { items: [{ instanceType: 'node', space: 'plant', externalId: 'g1', sources: [{ source: C('plant', 'Gone'), properties: { a: 1 } }] }] });
    expect((await ok('/models/containers/delete', { items: [{ space: 'plant', externalId: 'Gone' }, { space: 'plant', externalId: 'Never' }] })).items).toEqual([
      { space: 'plant', externalId: 'Gone' },
    ]);
    await ok('/models/containers', { items: [{ space: 'plant', externalId: 'Gone', properties: { a: { type: { type: 'int32' } } } }] });
    const list = await ok('/models/instances/list', { filter: { hasData: [C('plant', 'Gone')] } });
    expect(list.items).toEqual([]);
  });
});

describe('views', () => {
  beforeAll(async () => {
    await ok('/models/spaces', { items: [{ space: 'vw' }] });
    await ok('/models/containers', {
      items: [
        { space: 'vw', externalId: 'Named', properties: { name: { type: { type: 'text' } }, code: { type: { type: 'int32' } }, label: { type: { type: 'text' } } } },
        { space: 'vw', externalId: 'Edged', usedFor: 'edge', properties: { weight: { type: { type: 'float64' } } } },
      ],
    });
  });

  it('resolves implements with precedence, and reads only own properties on request', async () => {
    await ok('/models/views', {
      items: [
        { space: 'vw', externalId: 'Describable', version: '1', properties: { title: map(C('vw', 'Named'), 'name') } },
        { space: 'vw', externalId: 'Coded', version: '1', properties: { title: map(C('vw', 'Named'), 'label') } },
        { space: 'vw', externalId: 'Asset', version: '1', implements: [V('vw', 'Describable', '1'), V('vw', 'Coded', '1')], properties: { code: map(C('vw', 'Named'), 'code') } },
      ],
    });
    const [asset] = (await ok('/models/views/byids', { items: [{ space: 'vw', externalId: 'Asset', version: '1' }] })).items;
    // The later entry of implements wins: title comes from Coded.
    expect(asset.properties.title.containerPropertyIdentifier).toBe('label');
    expect(asset.mappedContainers).toEqual([C('vw', 'Named')]);
    const [own] = (await ok('/models/views/byids', { items: [{ space: 'vw', externalId: 'Asset', version: '1' }], includeInheritedProperties: false })).items;
    expect(Object.keys(own.properties)).toEqual(['code']);
  });

  it('refuses a view inheriting one identifier as properties of different types, naming the view and the property', async () => {
    await ok('/models/views', {
      items: [
        { space: 'vw', externalId: 'TitledText', version: '1', properties: { title: map(C('vw', 'Named'), 'name') } },
        { space: 'vw', externalId: 'TitledInt', version: '1', properties: { title: map(C('vw', 'Named'), 'code') } },
        { space: 'vw', externalId: 'Linked', version: '1', properties: { title: { type: { space: 'vw', externalId: 'rel' }, source: V('vw', 'TitledText', '1'), direction: 'outwards' } } },
      ],
    });
    const types = await h.post('/models/views', { items: [{ space: 'vw', externalId: 'Clash', version: '1', implements: [V('vw', 'TitledText', '1'), V('vw', 'TitledInt', '1')] }] });
    expect(errorMessage(types, 400)).toMatch(/items\[0\]\.implements: the view vw:Clash\/1 inherits the property "title" .*vw:Named\.code is int32 and vw:Named\.name is text/);
    const kinds = await h.post('/models/views', { items: [{ space: 'vw', externalId: 'Clash', version: '1', implements: [V('vw', 'TitledText', '1'), V('vw', 'Linked', '1')] }] });
    expect(errorMessage(kinds, 400)).toMatch(/vw:Clash\/1 inherits the property "title".*edge connection/);
    expect((await ok('/models/views/byids', { items: [{ space: 'vw', externalId: 'Clash' }] })).items).toEqual([]);
    // Declared in the view itself, the property is the view's own, and the view is accepted.
    await ok('/models/views', {
      items: [{ space: 'vw', externalId: 'Clash', version: '1', implements: [V('vw', 'TitledText', '1'), V('vw', 'TitledInt', '1')], properties: { title: map(C('vw', 'Named'), 'name') } }],
    });
  });

  it('refuses cyclic implements, unknown containers and views, and a filter on an unknown property', async () => {
    await ok('/models/views', { items: [{ space: 'vw', externalId: 'Loop1', version: '1', properties: {} }] });
    await ok('/models/views', { items: [{ space: 'vw', externalId: 'Loop2', version: '1', implements: [V('vw', 'Loop1', '1')] }] });
    const cycle = await h.post('/models/views', { items: [{ space: 'vw', externalId: 'Loop1', version: '2', implements: [V('vw', 'Loop2', '1')] }, { space: 'vw', externalId: 'Loop2', version: '1', implements: [V('vw', 'Loop1', '2')] }] });
    expect(errorMessage(cycle, 400)).toMatch(/implement each other in a cycle/);
    expect((await ok('/models/views/byids', { items: [{ space: 'vw', externalId: 'Loop1', version: '2' }] })).items).toEqual([]);
    const unknownContainer = await h.post('/models/views', { items: [{ space: 'vw', externalId: 'Bad', version: '1', properties: { x: map(C('vw', 'Nope'), 'x') } }] });
    expect(errorMessage(unknownContainer, 400)).toMatch(/containers do not exist: vw:Nope/);
    expect(unknownContainer.body.error.missing).toEqual([C('vw', 'Nope')]);
    const unknownView = await h.post('/models/views', { items: [{ space: 'vw', externalId: 'Bad', version: '1', implements: [V('vw', 'Nope', '1')] }] });
    expect(errorMessage(unknownView, 400)).toMatch(/views do not exist: vw:Nope\/1/);
    const filter = await h.post('/models/views', {
      items: [{ space: 'vw', externalId: 'Bad', version: '1', properties: { name: map(C('vw', 'Named'), 'name') }, filter: { equals: { property: ['vw', 'Named', 'nope'], value: 1 } } }],
    });
    expect(errorMessage(filter, 400)).toMatch(/items\[0\]\.filter\.equals\.property: the container vw:Named has no property "nope"/);
    expect((await ok('/models/views/byids', { items: [{ space: 'vw', externalId: 'Bad' }] })).items).toEqual([]);
  });

  it('refuses a change within a version that readers depend on (409), and lists versions', async () => {
    await ok('/models/views', { items: [{ space: 'vw', externalId: 'Ver', version: '1', properties: { name: map(C('vw', 'Named'), 'name'), code: map(C('vw', 'Named'), 'code') } }] });
    const removed = await h.post('/models/views', { items: [{ space: 'vw', externalId: 'Ver', version: '1', properties: { name: map(C('vw', 'Named'), 'name') } }] });
    expect(errorMessage(removed, 409)).toMatch(/"code".*cannot be removed within a version/);
    await ok('/models/views', { items: [{ space: 'vw', externalId: 'Ver', version: '1', name: 'Renamed', properties: { name: map(C('vw', 'Named'), 'name'), code: map(C('vw', 'Named'), 'code') } }] });
    await ok('/models/views', { items: [{ space: 'vw', externalId: 'Ver', version: '2', properties: { name: map(C('vw', 'Named'), 'name') } }] });
    const latest = (await h.get('/models/views?space=vw&limit=1000')).body.items.filter((v: any) => v.externalId === 'Ver');
    expect(latest.map((v: any) => v.version)).toEqual(['2']);
    const all = (await h.get('/models/views?space=vw&limit=1000&allVersions=true')).body.items.filter((v: any) => v.externalId === 'Ver');
    expect(all.map((v: any) => v.version).sort()).toEqual(['1', '2']);
    expect(all.find((v: any) => v.version === '1').name).toBe('Renamed');
    expect((await ok('/models/views/byids', { items: [{ space: 'vw', externalId: 'Ver' }] })).items).toHaveLength(2);
    expect((await ok('/models/views/delete', { items: [{ space: 'vw', externalId: 'Ver', version: '1' }] })).items).toEqual([{ space: 'vw', externalId: 'Ver', version: '1' }]);
    expect((await ok('/models/views/byids', { items: [{ space: 'vw', externalId: 'Ver' }] })).items.map((v: any) => v.version)).toEqual(['2']);
  });

  it('refuses adding, within a version, a property that would override one the view inherits (409)', async () => {
    await ok('/models/views', { items: [{ space: 'vw', externalId: 'Parent', version: '1', properties: { name: map(C('vw', 'Named'), 'name') } }] });
    await ok('/models/views', { items: [{ space: 'vw', externalId: 'Child', version: '1', implements: [V('vw', 'Parent', '1')], properties: { code: map(C('vw', 'Named'), 'code') } }] });
    const res = await h.post('/models/views', {
      items: [{ space: 'vw', externalId: 'Child', version: '1', implements: [V('vw', 'Parent', '1')], properties: { code: map(C('vw', 'Named'), 'code'), name: map(C('vw', 'Named'), 'code') } }],
    });
    expect(errorMessage(res, 409)).toMatch(/items\[0\]\.properties\.name: "name" would override a property the view inherits/);
    const [child] = (await ok('/models/views/byids', { items: [{ space: 'vw', externalId: 'Child', version: '1' }] })).items;
    expect(child.properties.name.containerPropertyIdentifier).toBe('name');
  });

  it('refuses a view mapping containers for nodes and for edges', async () => {
    const res = await h.post('/models/views', { items: [{ space: 'vw', externalId: 'Mixed', version: '1', properties: { name: map(C('vw', 'Named'), 'name'), w: map(C('vw', 'Edged'), 'weight') } }] });
    expect(errorMessage(res, 400)).toMatch(/nodes.*edges/);
  });
});

describe('data models', () => {
  beforeAll(async () => {
    await ok('/models/spaces', { items: [{ space: 'dm' }] });
    await ok('/models/containers', { items: [{ space: 'dm', externalId: 'Box', properties: { size: { type: { type: 'int32' } } } }] });
  });

  it('applies views given inline with the data model, lists with inline views, deletes', async () => {
    const [m] = (
      await ok('/models/datamodels', {
        items: [{ space: 'dm', externalId: 'Model', version: '1', views: [{ space: 'dm', externalId: 'BoxV', version: '1', properties: { size: map(C('dm', 'Box'), 'size') } }] }],
      })
    ).items;
    expect(m.views).toEqual([V('dm', 'BoxV', '1')]);
    expect((await ok('/models/views/byids', { items: [{ space: 'dm', externalId: 'BoxV', version: '1' }] })).items).toHaveLength(1);
    const listed = (await h.get('/models/datamodels?space=dm&inlineViews=true')).body.items;
    expect(listed[0].views[0].properties.size.type).toEqual({ type: 'int32', list: false });
    const inline = (await ok('/models/datamodels/byids?inlineViews=true', { items: [{ space: 'dm', externalId: 'Model' }] })).items;
    expect(inline[0].views[0].externalId).toBe('BoxV');
    expect((await ok('/models/datamodels/delete', { items: [{ space: 'dm', externalId: 'Model', version: '1' }] })).items).toHaveLength(1);
    expect((await ok('/models/datamodels/byids', { items: [{ space: 'dm', externalId: 'Model' }] })).items).toEqual([]);
  });

  it('refuses a data model naming a view that does not exist, applying none of the request', async () => {
    const res = await h.post('/models/datamodels', {
      items: [{ space: 'dm', externalId: 'Broken', version: '1', views: [{ space: 'dm', externalId: 'Fresh', version: '1', properties: {} }, V('dm', 'Missing', '1')] }],
    });
    expect(errorMessage(res, 400)).toMatch(/views do not exist: dm:Missing\/1/);
    expect((await ok('/models/views/byids', { items: [{ space: 'dm', externalId: 'Fresh' }] })).items).toEqual([]);
  });
});
