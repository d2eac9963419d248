/**
 * The request schemas of the /models operations: the bodies the JavaScript and Python SDKs send are
 * accepted (with the fields they add), and the reference's limits are refused with a message naming the place.
 */
import { describe, expect, it } from 'vitest';
import { compileBodyValidator } from '../../src/http/validation.js';
import { ApplyContainersBody, ContainerIdsBody, ContainerSubObjectsBody, InspectContainersBody } from '../../src/resources/models/container-schema.js';
import { ApplyDataModelsBody, DataModelIdsBody } from '../../src/resources/models/data-model-schema.js';
import {
  AggregateInstancesBody,
  ApplyInstancesBody,
  DeleteInstancesBody,
  InspectInstancesBody,
  InstanceIdsBody,
  ListInstancesBody,
  SearchInstancesBody,
} from '../../src/resources/models/instance-schema.js';
import { parseUsedFor } from '../../src/resources/models/list-params.js';
import { ApplySpacesBody, SpaceIdsBody } from '../../src/resources/models/space-schema.js';
import { normalizeSpaces } from '../../src/resources/models/spaces.js';
import { ApplyViewsBody, VersionedIdsBody, ViewIdsBody } from '../../src/resources/models/view-schema.js';
import { expectApiError } from '../support/dm-schema.js';

const check = (schema: object) => {
  const validate = compileBodyValidator<unknown>(schema);
  return (body: unknown) => validate(structuredClone(body));
};
const view = { type: 'view', space: 'sp', externalId: 'Pump', version: 'v1' };
const node = { instanceType: 'node', space: 'sp', externalId: 'n1' };

describe('space requests', () => {
  const apply = check(ApplySpacesBody);
  it('takes what the SDKs send and refuses the limits', () => {
    apply({ items: [{ space: 'my-space_1', name: 'n', description: 'd' }] });
    check(SpaceIdsBody)({ items: [{ space: 'a' }] });
    expectApiError(() => apply({ items: [] }), 400, 'items', 'at least 1');
    expectApiError(() => apply({ items: Array.from({ length: 101 }, (_, i) => ({ space: `s${i}` })) }), 400, 'items', 'at most 100');
    expectApiError(() => apply({ items: [{ space: '1abc' }] }), 400, 'items[0].space');
    expectApiError(() => apply({ items: [{ space: 'a'.repeat(44) }] }), 400, 'items[0].space');
    expectApiError(() => apply({ items: [{ space: 'a', name: 'x'.repeat(256) }] }), 400, 'items[0].name', 'at most 255');
    expectApiError(() => apply({ items: [{ space: 'a', description: 'x'.repeat(1025) }] }), 400, 'items[0].description', 'at most 1024');
  });

  it('refuses reserved and system spaces, and a space twice', () => {
    expect(normalizeSpaces([{ space: 'plant', name: 'P' }])).toEqual([{ space: 'plant', name: 'P' }]);
    for (const space of ['space', 'cdf', 'node', 'edge', 'system', 'mapping', 'version_info']) {
      expectApiError(() => normalizeSpaces([{ space: 'ok' }, { space }]), 400, 'items[1].space', 'reserved');
    }
    expectApiError(() => normalizeSpaces([{ space: 'cdf_cdm' }]), 400, 'items[0].space', 'cdf_');
    const error = expectApiError(() => normalizeSpaces([{ space: 'a' }, { space: 'a' }]), 400, 'more than once');
    expect(error.extras.duplicated).toEqual([{ space: 'a' }]);
  });
});

describe('container requests', () => {
  it('takes the Python SDK container (immutable, autoIncrement and collation always sent)', () => {
    check(ApplyContainersBody)({
      items: [
        {
          space: 'sp',
          externalId: 'C',
          properties: {
            name: { type: { type: 'text', list: false, collation: 'ucs_basic' }, immutable: false, nullable: true, autoIncrement: false, name: 'name' },
            rel: { type: { type: 'direct', list: false, container: { space: 'sp', externalId: 'T', type: 'container' } }, immutable: false },
          },
          constraints: { u: { properties: ['name'], constraintType: 'uniqueness' } },
          indexes: { i: { properties: ['name'], cursorable: true, indexType: 'btree' } },
        },
      ],
    });
  });

  it('takes the sub-object and inspect bodies, with their limits', () => {
    const sub = check(ContainerSubObjectsBody);
    sub({ items: [{ space: 'sp', containerExternalId: 'C', identifier: 'i' }] });
    expectApiError(() => sub({ items: Array.from({ length: 11 }, () => ({ space: 'sp', containerExternalId: 'C', identifier: 'i' })) }), 400, 'items', 'at most 10');
    check(InspectContainersBody)({ inspectionOperations: { totalInvolvedViewCount: { allVersions: true, includeUnavailableViews: false } }, items: [{ space: 'sp', externalId: 'C' }] });
    expectApiError(() => check(InspectContainersBody)({ items: [{ space: 'sp', externalId: 'C' }] }), 400, 'inspectionOperations');
    expectApiError(() => check(ContainerIdsBody)({ items: [{ space: 'sp' }] }), 400, 'items[0]', 'externalId');
  });

  it('reads usedFor in each form clients send it', () => {
    expect(parseUsedFor(['[node,edge]'])).toEqual(['node', 'edge']);
    expect(parseUsedFor(['["all"]'])).toEqual(['all']);
    expect(parseUsedFor(['node', 'Edge'])).toEqual(['node', 'edge']);
    expect(parseUsedFor(undefined)).toBeUndefined();
    expectApiError(() => parseUsedFor(['[node,nodes]']), 400, 'usedFor', '"nodes"');
  });
});

describe('view and data model requests', () => {
  it('takes the JavaScript SDK by-ids body, with includeInheritedProperties in it', () => {
    check(ViewIdsBody)({ items: [{ space: 'sp', externalId: 'V' }, { space: 'sp', externalId: 'V', version: '1.0' }], includeInheritedProperties: false });
    expectApiError(() => check(VersionedIdsBody)({ items: [{ space: 'sp', externalId: 'V' }] }), 400, 'items[0]', 'version');
  });

  it('refuses bad versions and views without a version in implements', () => {
    const apply = check(ApplyViewsBody);
    apply({ items: [{ space: 'sp', externalId: 'V', version: '2.1-beta_3', implements: [view] }] });
    expectApiError(() => apply({ items: [{ space: 'sp', externalId: 'V', version: '.1' }] }), 400, 'items[0].version');
    expectApiError(() => apply({ items: [{ space: 'sp', externalId: 'V', version: 'v1', implements: [{ type: 'view', space: 'sp', externalId: 'W' }] }] }), 400, 'items[0].implements[0]', 'version');
  });

  it('takes data models listing views by reference and by definition', () => {
    check(ApplyDataModelsBody)({ items: [{ space: 'sp', externalId: 'M', version: '1', views: [view, { space: 'sp', externalId: 'W', version: 'v1', properties: {} }] }] });
    check(DataModelIdsBody)({ items: [{ space: 'sp', externalId: 'M' }] });
  });
});

describe('instance requests', () => {
  it('takes the apply body the SDKs send, and an empty properties object', () => {
    check(ApplyInstancesBody)({
      items: [
        { ...node, existingVersion: 0, sources: [{ source: view, properties: { name: 'x' } }, { source: { type: 'container', space: 'sp', externalId: 'C' }, properties: {} }] },
        { instanceType: 'edge', space: 'sp', externalId: 'e', type: { space: 'sp', externalId: 't' }, startNode: { space: 'sp', externalId: 'a' }, endNode: { space: 'sp', externalId: 'b' } },
      ],
      autoCreateStartNodes: true,
      autoCreateEndNodes: false,
      autoCreateDirectRelations: true,
      skipOnVersionConflict: false,
      replace: false,
    });
    check(ApplyInstancesBody)({ items: [], delete: [node] });
  });

  it('refuses the limits of instance requests', () => {
    const apply = check(ApplyInstancesBody);
    expectApiError(() => apply({ items: Array.from({ length: 1001 }, () => node) }), 400, 'items', 'at most 1000');
    expectApiError(() => apply({ items: [{ ...node, externalId: '' }] }), 400, 'items[0].externalId');
    expectApiError(() => apply({ items: [{ ...node, externalId: 'x'.repeat(257) }] }), 400, 'items[0].externalId', 'at most 256');
    expectApiError(() => apply({ items: [{ ...node, externalId: 'a\u0000b' }] }), 400, 'items[0].externalId');
    expectApiError(() => apply({ items: [{ ...node, existingVersion: -1 }] }), 400, 'items[0].existingVersion');
    expectApiError(() => apply({ items: [{ ...node, sources: [] }] }), 400, 'items[0].sources', 'at least 1');
    expectApiError(() => check(DeleteInstancesBody)({ items: [] }), 400, 'items');
    expectApiError(() => check(InstanceIdsBody)({ items: [node], sources: Array.from({ length: 11 }, () => ({ source: view })) }), 400, 'sources', 'at most 10');
  });

  it('takes the Python SDK list, search and aggregate bodies', () => {
    check(ListInstancesBody)({ includeTyping: false, instanceType: 'node', sources: [{ source: view }], filter: { equals: { property: ['node', 'space'], value: 'sp' } }, limit: 1000, cursor: null, sort: [{ property: ['sp', 'Pump/v1', 'name'], direction: 'descending', nullsFirst: true }] });
    check(SearchInstancesBody)({ view, query: 'pump', instanceType: 'node', properties: ['name'], limit: 10, operator: 'AND', sort: [{ property: ['name'], direction: 'ascending' }] });
    check(AggregateInstancesBody)({ view, instanceType: 'node', limit: 100, aggregates: [{ count: { property: 'name' } }, { histogram: { property: 'size', interval: 10 } }], groupBy: ['kind'] });
    check(InspectInstancesBody)({ inspectionOperations: { involvedViews: { allVersions: false }, involvedContainers: {} }, items: [node] });
  });

  it('refuses what the read bodies limit', () => {
    expectApiError(() => check(ListInstancesBody)({ limit: 1001 }), 400, 'limit');
    expectApiError(() => check(ListInstancesBody)({ sort: Array.from({ length: 6 }, () => ({ property: ['node', 'space'] })) }), 400, 'sort', 'at most 5');
    expectApiError(() => check(SearchInstancesBody)({ view, sort: [{ property: ['name'], nullsFirst: true }] }), 400, 'sort[0]', 'nullsFirst');
    expectApiError(() => check(AggregateInstancesBody)({ view, groupBy: [] }), 400, 'groupBy');
    expectApiError(() => check(AggregateInstancesBody)({ view, aggregates: [{ histogram: { property: 'x', interval: 0 } }] }), 400, 'aggregates[0].histogram.interval');
    expectApiError(() => check(AggregateInstancesBody)({ view, properties: Array.from({ length: 201 }, () => 'x') }), 400, 'properties', 'at most 200');
  });
});
