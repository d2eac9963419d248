/**
 * Views: the rules of an apply request, resolution of `implements` (precedence, cycles, what is gone),
 * the derived fields, the read form, and what may change within a version.
 */
import { describe, expect, it } from 'vitest';
import { compileBodyValidator } from '../../src/http/validation.js';
import { checkViewUpdate } from '../../src/resources/models/view-changes.js';
import { viewReadForm } from '../../src/resources/models/view-resolution.js';
import { ViewRead } from '../../src/resources/models/view-schema.js';
import { viewDependencies } from '../../src/resources/models/views.js';
import { containerRefOf, containers, expectApiError, MemorySchema, viewRefOf, views } from '../support/dm-schema.js';

const META = { createdTime: 1, lastUpdatedTime: 2, isGlobal: false };
const C = (externalId: string) => containerRefOf('sp', externalId);
const V = (externalId: string, version = 'v1') => viewRefOf('sp', externalId, version);
const map = (container: string, property: string, extra: Record<string, unknown> = {}) => ({ container: C(container), containerPropertyIdentifier: property, ...extra });
const view = (externalId: string, properties: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({ space: 'sp', externalId, version: 'v1', properties, ...extra });

const CONTAINERS = containers(
  { space: 'sp', externalId: 'Describable', usedFor: 'all', properties: { name: { type: { type: 'text' } }, description: { type: { type: 'text' } } } },
  {
    space: 'sp',
    externalId: 'Asset',
    properties: {
      parent: { type: { type: 'direct' } },
      links: { type: { type: 'direct', list: true } },
      code: { type: { type: 'text' }, nullable: false },
      size: { type: { type: 'int32' } },
      count: { type: { type: 'int64' } },
      other: { type: { type: 'int32' } },
    },
  },
  { space: 'sp', externalId: 'Flow', usedFor: 'edge', properties: { rate: { type: { type: 'float64' } } } },
  { space: 'sp', externalId: 'Extra', properties: { x: { type: { type: 'text' } }, y: { type: { type: 'text' }, nullable: false } } },
);

/** A schema holding the containers above and `defs`, resolved by a fresh resolver. */
const schemaWith = (...defs: unknown[]) => new MemorySchema(CONTAINERS, views(...defs));

describe('view definitions', () => {
  it('sorts each property into its kind, with defaults', () => {
    const [v] = views(
      view('Asset', {
        name: map('Describable', 'name', { name: 'Name' }),
        parent: map('Asset', 'parent', { source: V('Asset') }),
        flows: { type: { space: 'sp', externalId: 'flows-to' }, source: V('Asset') },
        children: { connectionType: 'multi_reverse_direct_relation', source: V('Asset'), through: { source: V('Asset'), identifier: 'parent' } },
      }),
    );
    expect(v.properties.name).toEqual({ kind: 'mapped', container: { space: 'sp', externalId: 'Describable' }, containerPropertyIdentifier: 'name', name: 'Name' });
    expect(v.properties.flows).toMatchObject({ kind: 'edge', connectionType: 'multi_edge_connection', direction: 'outwards' });
    expect(v.properties.children).toMatchObject({ kind: 'reverse', connectionType: 'multi_reverse_direct_relation' });
    expect(viewDependencies(v)).toEqual({
      views: [{ space: 'sp', externalId: 'Asset', version: 'v1' }],
      containers: [
        { space: 'sp', externalId: 'Describable' },
        { space: 'sp', externalId: 'Asset' },
      ],
    });
  });

  it('refuses what does not make a property, naming the place', () => {
    expectApiError(() => views(view('A', { p: { container: C('Asset') } })), 400, 'items[0].properties.p', 'containerPropertyIdentifier');
    expectApiError(() => views(view('A', { p: map('Asset', 'size', { direction: 'inwards' }) })), 400, 'items[0].properties.p.direction', 'mapped');
    expectApiError(() => views(view('A', { p: { type: { space: 'sp', externalId: 't' } } })), 400, 'items[0].properties.p', '"source"');
    expectApiError(() => views(view('A', { p: { connectionType: 'single_reverse_direct_relation', source: V('A') } })), 400, 'items[0].properties.p', '"through"');
    expectApiError(() => views(view('A', { p: { through: { source: V('A'), identifier: 'x' }, source: V('A') } })), 400, 'items[0].properties.p', 'connectionType');
    expectApiError(() => views(view('A', { p: { source: V('A') } })), 400, 'items[0].properties.p', 'expected a mapped property');
    expectApiError(() => views(view('A', { p: { type: { space: 'sp', externalId: 't' }, source: V('A'), through: { source: V('A'), identifier: 'x' }, connectionType: 'multi_reverse_direct_relation' } })), 400, 'items[0].properties.p.type');
  });

  it('refuses reserved identifiers, too many properties or implemented views, and repeats', () => {
    expectApiError(() => views(view('String')), 400, 'items[0].externalId', 'reserved');
    expectApiError(() => views(view('A', { externalId: map('Asset', 'size') })), 400, 'items[0].properties.externalId', 'reserved');
    const many = Object.fromEntries(Array.from({ length: 301 }, (_, i) => [`p${i}`, map('Asset', 'size')]));
    expectApiError(() => views(view('A', many)), 400, 'items[0].properties', 'at most 300');
    expectApiError(() => views(view('A', {}, { implements: Array.from({ length: 11 }, (_, i) => V(`B${i}`)) })), 400, 'items[0].implements', 'at most 10');
    expectApiError(() => views(view('A', {}, { implements: [V('A')] })), 400, 'items[0].implements[0]', 'itself');
    expectApiError(() => views(view('A', {}, { implements: [V('B'), V('B')] })), 400, 'items[0].implements[1]', 'twice');
    const e = expectApiError(() => views(view('A'), view('A')), 400, 'more than once');
    expect(e.extras.duplicated).toEqual([{ space: 'sp', externalId: 'A', version: 'v1' }]);
  });
});

describe('implements', () => {
  it('resolves conflicts by precedence: the view, then later implements before earlier ones', () => {
    // A implements B; B implements [C, D]; C and D both declare x, so B and A read D's x.
    const s = schemaWith(
      view('A', { a: map('Asset', 'size') }, { implements: [V('B')] }),
      view('B', { b: map('Asset', 'size') }, { implements: [V('C'), V('D')] }),
      view('C', { c: map('Asset', 'size'), x: map('Asset', 'count') }),
      view('D', { d: map('Asset', 'size'), x: map('Asset', 'other') }),
    );
    const a = s.resolve({ space: 'sp', externalId: 'A', version: 'v1' });
    expect([...a.properties.keys()]).toEqual(['c', 'x', 'd', 'b', 'a']);
    expect(a.properties.get('x')).toMatchObject({ containerPropertyIdentifier: 'other', declaredIn: { externalId: 'D' } });
    const swapped = schemaWith(
      view('A', { a: map('Asset', 'size') }, { implements: [V('B')] }),
      view('B', { b: map('Asset', 'size') }, { implements: [V('D'), V('C')] }),
      view('C', { c: map('Asset', 'size'), x: map('Asset', 'count') }),
      view('D', { d: map('Asset', 'size'), x: map('Asset', 'other') }),
    );
    expect(swapped.resolve({ space: 'sp', externalId: 'A', version: 'v1' }).properties.get('x')).toMatchObject({ containerPropertyIdentifier: 'count' });
  });

  it('lets the view itself win over what it implements, and a diamond resolve once', () => {
    const s = schemaWith(
      view('A', { x: map('Asset', 'size') }, { implements: [V('B'), V('C')] }),
      view('B', { x: map('Asset', 'count'), b: map('Asset', 'count') }, { implements: [V('D')] }),
      view('C', { c: map('Asset', 'count') }, { implements: [V('D')] }),
      view('D', { d: map('Asset', 'other'), b: map('Asset', 'other') }),
    );
    const a = s.resolve({ space: 'sp', externalId: 'A', version: 'v1' });
    expect(a.properties.get('x')).toMatchObject({ containerPropertyIdentifier: 'size' });
    expect(a.properties.get('b')).toMatchObject({ containerPropertyIdentifier: 'count' });
    expect([...a.properties.keys()].sort()).toEqual(['b', 'c', 'd', 'x']);
  });

  it('refuses implemented views that do not exist, and cycles', () => {
    const s = schemaWith(view('A', {}, { implements: [V('Missing')] }));
    const e = expectApiError(() => s.resolver().validate(s.view(V('A'))!, ['items', 0]), 400, 'items[0]', 'sp:Missing/v1');
    expect(e.extras.missing).toEqual([V('Missing')]);
    const cyc = schemaWith(view('A', {}, { implements: [V('B')] }), view('B', {}, { implements: [V('C')] }), view('C', {}, { implements: [V('A')] }));
    expectApiError(() => cyc.resolver().validate(cyc.view(V('A'))!, ['items', 0]), 400, 'items[0].implements', 'cycle', 'sp:A/v1 implements sp:B/v1 implements sp:C/v1 implements sp:A/v1');
    // Read leniently, a cycle left in stored views still resolves.
    expect([...cyc.resolve(V('B')).properties.keys()]).toEqual([]);
  });

  it('drops inherited properties whose container or view is gone', () => {
    const s = schemaWith(view('A', { a: map('Asset', 'size') }, { implements: [V('B'), V('Gone')] }), view('B', { b: map('Deleted', 'z'), c: map('Asset', 'count') }));
    expect([...s.resolve(V('A')).properties.keys()]).toEqual(['c', 'a']);
  });
});

describe('derived fields', () => {
  it('derives mapped containers, usedFor, writable and queryable', () => {
    const s = schemaWith(
      view('Named', { name: map('Describable', 'name') }),
      view('AssetV', { code: map('Asset', 'code') }, { implements: [V('Named')] }),
      view('Partial', { size: map('Asset', 'size') }),
      view('Edges', { rate: map('Flow', 'rate'), name: map('Describable', 'name') }),
      view('Filtered', {}, { filter: { matchAll: {} } }),
      view('Empty'),
    );
    expect(s.resolve(V('Named'))).toMatchObject({ usedFor: 'all', writable: true, queryable: true, mappedContainers: [{ externalId: 'Describable' }] });
    expect(s.resolve(V('AssetV'))).toMatchObject({ usedFor: 'node', writable: true, mappedContainers: [{ externalId: 'Describable' }, { externalId: 'Asset' }] });
    expect(s.resolve(V('Partial'))).toMatchObject({ usedFor: 'node', writable: false });
    expect(s.resolve(V('Edges'))).toMatchObject({ usedFor: 'edge' });
    expect(s.resolve(V('Filtered'))).toMatchObject({ queryable: true, usedFor: 'node', mappedContainers: [] });
    expect(s.resolve(V('Empty'))).toMatchObject({ queryable: false, writable: true });
  });

  it('refuses a view mapping containers of nodes and of edges', () => {
    const s = schemaWith(view('Mixed', { rate: map('Flow', 'rate'), size: map('Asset', 'size') }));
    expectApiError(() => s.resolver().validate(s.view(V('Mixed'))!, ['items', 0]), 400, 'items[0].properties', 'sp:Asset', 'sp:Flow');
  });

  it('checks what a view maps and what its reverse relations go through', () => {
    const check = (...defs: unknown[]) => {
      const s = schemaWith(...defs);
      return () => s.resolver().validate(s.view(V((defs[0] as { externalId: string }).externalId))!, ['items', 0]);
    };
    const e = expectApiError(check(view('A', { p: map('Nope', 'x') })), 400, 'items[0]', 'sp:Nope');
    expect(e.extras.missing).toEqual([C('Nope')]);
    expectApiError(check(view('A', { p: map('Asset', 'nope') })), 400, 'items[0].properties.p.containerPropertyIdentifier', '"nope"');
    expectApiError(check(view('A', { p: map('Asset', 'size', { source: V('A') }) })), 400, 'items[0].properties.p.source', 'direct');
    expectApiError(
      check(view('A', { kids: { connectionType: 'multi_reverse_direct_relation', source: V('A'), through: { source: V('A'), identifier: 'size' } }, size: map('Asset', 'size') })),
      400,
      'items[0].properties.kids.through.identifier',
      'not a direct relation',
    );
    expectApiError(check(view('A', { kids: { connectionType: 'multi_reverse_direct_relation', source: V('A'), through: { source: V('A'), identifier: 'none' } } })), 400, 'kids.through.identifier');
    expectApiError(check(view('A', { kids: { connectionType: 'multi_reverse_direct_relation', source: V('B'), through: { source: V('B'), identifier: 'p' } } })), 400, 'items[0]', 'sp:B/v1');
  });

  it('knows whether a reverse relation goes through a list, also through its own view', () => {
    const s = schemaWith(
      view('A', {
        parent: map('Asset', 'parent'),
        children: { connectionType: 'multi_reverse_direct_relation', source: V('A'), through: { source: V('A'), identifier: 'parent' } },
        linked: { connectionType: 'multi_reverse_direct_relation', source: V('A'), through: { source: C('Asset'), identifier: 'links' } },
      }),
    );
    const a = s.resolver().validate(s.view(V('A'))!, ['items', 0]);
    expect(a.properties.get('children')).toMatchObject({ targetsList: false });
    expect(a.properties.get('linked')).toMatchObject({ targetsList: true });
  });

  it('checks the filter against the schema', () => {
    const s = schemaWith(view('A', { size: map('Asset', 'size') }, { filter: { equals: { property: ['sp', 'A/v1', 'size'], value: 'big' } } }));
    expectApiError(() => s.resolver().validate(s.view(V('A'))!, ['items', 0]), 400, 'items[0].filter.equals.value', 'integer');
    const ok = schemaWith(view('A', { size: map('Asset', 'size') }, { filter: { and: [{ range: { property: ['size'], gt: 3 } }, { hasData: [V('A')] }] } }));
    expect(ok.resolver().validate(ok.view(V('A'))!, ['items', 0]).queryable).toBe(true);
  });
});

describe('view read form', () => {
  it('reads every kind of property, with types from the containers, inherited or not', () => {
    const s = schemaWith(
      view('Named', { name: map('Describable', 'name', { description: 'The name' }) }),
      view(
        'A',
        {
          parent: map('Asset', 'parent', { source: V('A') }),
          flows: { type: { space: 'sp', externalId: 'flows' }, source: V('A'), edgeSource: V('FlowV'), connectionType: 'single_edge_connection', direction: 'inwards' },
          children: { connectionType: 'multi_reverse_direct_relation', source: V('A'), through: { source: V('A'), identifier: 'parent' }, name: 'Kids' },
        },
        { implements: [V('Named')], filter: { hasData: [V('A')] } },
      ),
    );
    const a = s.resolve(V('A'));
    const read = viewReadForm(a, META);
    expect(Object.keys(read.properties)).toEqual(['name', 'parent', 'flows', 'children']);
    expect(read.properties.name).toEqual({
      container: C('Describable'),
      containerPropertyIdentifier: 'name',
      type: { type: 'text', list: false, collation: 'ucs_basic' },
      nullable: true,
      immutable: false,
      autoIncrement: false,
      description: 'The name',
      constraintState: {},
    });
    expect(read.properties.parent).toMatchObject({ type: { type: 'direct', list: false, source: V('A') } });
    expect(read.properties.flows).toEqual({ connectionType: 'single_edge_connection', type: { space: 'sp', externalId: 'flows' }, source: V('A'), edgeSource: V('FlowV'), direction: 'inwards' });
    expect(read.properties.children).toEqual({ connectionType: 'multi_reverse_direct_relation', source: V('A'), through: { source: V('A'), identifier: 'parent' }, targetsList: false, name: 'Kids' });
    expect(read).toMatchObject({ implements: [V('Named')], filter: { hasData: [V('A')] }, writable: false, queryable: true, usedFor: 'node', mappedContainers: [C('Describable'), C('Asset')] });
    compileBodyValidator(ViewRead)(structuredClone(read));
    expect(Object.keys(viewReadForm(a, META, { includeInheritedProperties: false }).properties)).toEqual(['parent', 'flows', 'children']);
  });
});

describe('view updates within a version', () => {
  const stored = schemaWith(
    view('Base', { name: map('Describable', 'name') }),
    view(
      'A',
      {
        size: map('Asset', 'size'),
        parent: map('Asset', 'parent', { source: V('A') }),
        flows: { type: { space: 'sp', externalId: 'flows' }, source: V('A') },
      },
      { implements: [V('Base')], name: 'A' },
    ),
  );
  const before = stored.resolve(V('A'));
  const update = (changes: (p: Record<string, unknown>) => Record<string, unknown>, extra: Record<string, unknown> = {}) => {
    const props = changes({ size: map('Asset', 'size'), parent: map('Asset', 'parent', { source: V('A') }), flows: { type: { space: 'sp', externalId: 'flows' }, source: V('A') } });
    const [next] = views(view('A', props, { implements: [V('Base')], name: 'A', ...extra }));
    return checkViewUpdate(before, next, stored, ['items', 0]);
  };

  it('allows names, descriptions, filters, remapping to the same type, new nullable properties of mapped containers and new connections', () => {
    expect(update((p) => p)).toBe(false);
    expect(update((p) => p, { name: 'Renamed', description: 'd', filter: { matchAll: {} } })).toBe(true);
    expect(update((p) => ({ ...p, size: map('Asset', 'other', { name: 'Size' }) }))).toBe(true);
    expect(update((p) => ({ ...p, count: map('Asset', 'count') }))).toBe(true);
    expect(update((p) => ({ ...p, back: { connectionType: 'single_reverse_direct_relation', source: V('A'), through: { source: V('A'), identifier: 'parent' } } }))).toBe(true);
  });

  it('needs a new version for anything readers depend on', () => {
    const refuse = (changes: (p: Record<string, unknown>) => Record<string, unknown>, extra: Record<string, unknown>, ...parts: string[]) =>
      expectApiError(() => update(changes, extra), 409, 'new version', ...parts);
    refuse((p) => p, { implements: [] }, 'items[0].implements');
    refuse(({ size: _, ...p }) => p, {}, 'items[0].properties.size', 'removed');
    refuse((p) => ({ ...p, size: map('Asset', 'count') }), {}, 'items[0].properties.size', 'same type');
    refuse((p) => ({ ...p, parent: map('Asset', 'parent') }), {}, 'items[0].properties.parent', 'source hint');
    refuse((p) => ({ ...p, flows: { ...(p.flows as object), direction: 'inwards' } }), {}, 'items[0].properties.flows');
    refuse((p) => ({ ...p, size: { type: { space: 'sp', externalId: 'x' }, source: V('A') } }), {}, 'items[0].properties.size', 'from mapped to edge');
    refuse((p) => ({ ...p, code: map('Asset', 'code') }), {}, 'items[0].properties.code', 'not nullable');
    refuse((p) => ({ ...p, x: map('Extra', 'x') }), {}, 'items[0].properties.x', 'does not map yet');
    refuse((p) => ({ ...p, name: map('Asset', 'count') }), {}, 'items[0].properties.name', 'inherits');
  });
});
