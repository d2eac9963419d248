/**
 * External data sources of transformations. Sources are create-only from version 20260828: an external id
 * that exists is a 409 and the request creates nothing; changing one is deleting and creating it again.
 * Before that version a create replaces the source of an external id that exists. The client secret of a source
 * is checked for presence and not kept, since nothing in Strata reads from outside: the engine reaches no
 * network. For the same reason verifying a source never reports it usable (no `usableVersion`), whatever
 * its settings; a source that does not exist, or that the request does not see, answers the same.
 */
import { Type, type Static } from '@sinclair/typebox';
import { InternalId } from '../../http/common-schemas.js';
import type { DatedValue } from '../../http/dated-changes.js';
import type { Services } from '../../http/services.js';
import { createItems, deleteItems, fromModel, listItems, upsertItems, type ResourceSpec } from '../crud.js';
import { dataSetCatalog } from '../datasets/model.js';
import { dataSourceModel } from './model.js';

const Id = Type.String({ minLength: 1, maxLength: 255 });
export const DataSourceCreate = Type.Object(
  {
    externalId: Id,
    format: Type.Literal('one_lake'),
    name: Type.Optional(Id),
    dataSetId: Type.Optional(InternalId),
    settings: Type.Object(
      {
        credentials: Type.Object({ clientId: Id, tenantId: Id, clientSecret: Type.String({ minLength: 1, maxLength: 4096 }) }, { additionalProperties: false }),
        locationDescription: Type.Object({ workspaceId: Id, containerId: Id }, { additionalProperties: false }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type DataSourceCreate = Static<typeof DataSourceCreate>;

const spec: ResourceSpec<DataSourceCreate> = { ...fromModel(dataSourceModel), references: [{ field: 'dataSetId', catalog: dataSetCatalog }] };

export function createDataSources(services: Services, projectId: number, items: readonly DataSourceCreate[], mode: DatedValue<'externalDataSourceCreate'>) {
  const kept = items.map(({ settings: { credentials: { clientSecret: _, ...credentials }, locationDescription }, ...item }) => ({ ...item, settings: { credentials, locationDescription } }));
  return (mode === 'createOnly' ? createItems : upsertItems)(spec, services, projectId, kept as DataSourceCreate[]);
}

export function listDataSources(services: Services, projectId: number, q: { limit?: number; cursor?: string }) {
  return listItems(spec as ResourceSpec<unknown>, services, projectId, q, undefined);
}

export function deleteDataSources(services: Services, projectId: number, items: ReadonlyArray<{ externalId: string }>) {
  return deleteItems(spec as ResourceSpec<unknown>, services, projectId, items, false);
}

export function verifyDataSource(externalId: string) {
  return { externalId: { externalId } };
}
