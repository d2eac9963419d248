/**
 * The streams and records operations. Records are typed by data modeling containers, so their operations
 * that name containers also need `dataModelsAcl:READ`, as the reference states.
 */
import { ApiError } from '../../http/errors.js';
import { route, type ApiRoute } from '../../http/route.js';
import { aggregateRecords } from './record-aggregates.js';
import { filterRecords, syncRecords } from './record-reads.js';
import { deleteRecords, writeRecords } from './record-writes.js';
import {
  AggregateRecordsBody,
  CreateStreamsBody,
  DeleteRecordsBody,
  DeleteStreamsBody,
  FilterRecordsBody,
  RetrieveStreamQuery,
  StreamParams,
  SyncRecordsBody,
  WriteRecordsBody,
} from './schema.js';
import { createStreams, deleteStreams, listStreams, retrieveStream } from './streams.js';

const streams = (action: 'CREATE' | 'READ' | 'DELETE') => ({ acl: 'streamsAcl', action });
const records = (action: 'READ' | 'WRITE') => ({ acl: 'streamRecordsAcl', action });
const schemaRead = [{ acl: 'dataModelsAcl', action: 'READ' }];

export const streamRoutes: ApiRoute[] = [
  route({
    method: 'POST',
    path: '/streams',
    capability: streams('CREATE'),
    body: CreateStreamsBody,
    status: 201,
    handler: ({ services, project, body }) => createStreams(services, project.id, body),
  }),
  route({
    method: 'GET',
    path: '/streams',
    capability: streams('READ'),
    handler: ({ services, project }) => listStreams(services, project.id),
  }),
  route({
    method: 'GET',
    path: '/streams/:streamId',
    capability: streams('READ'),
    params: StreamParams,
    query: RetrieveStreamQuery,
    handler: ({ services, project, params, query }) => retrieveStream(services, project.id, params.streamId, query.includeStatistics ?? false),
  }),
  route({
    method: 'DELETE',
    path: '/streams/:streamId',
    capability: streams('DELETE'),
    params: StreamParams,
    handler: ({ params }) => {
      throw new ApiError(
        410,
        `This operation is no longer served; delete the stream with POST /streams/delete and the body {"items": [{"externalId": ${JSON.stringify(params.streamId)}}]}`,
      );
    },
  }),
  route({
    method: 'POST',
    path: '/streams/delete',
    capability: streams('DELETE'),
    body: DeleteStreamsBody,
    handler: ({ services, project, body }) => deleteStreams(services, project.id, body.items.map((i) => i.externalId)),
  }),
  route({
    method: 'POST',
    path: '/streams/:streamId/records',
    capability: records('WRITE'),
    alsoNeeds: schemaRead,
    params: StreamParams,
    body: WriteRecordsBody,
    status: 202,
    handler: ({ services, project, params, body }) => writeRecords(services, project.id, params.streamId, body, 'ingest'),
  }),
  route({
    method: 'POST',
    path: '/streams/:streamId/records/upsert',
    capability: records('WRITE'),
    alsoNeeds: schemaRead,
    params: StreamParams,
    body: WriteRecordsBody,
    status: 202,
    handler: ({ services, project, params, body }) => writeRecords(services, project.id, params.streamId, body, 'upsert'),
  }),
  route({
    method: 'POST',
    path: '/streams/:streamId/records/delete',
    capability: records('WRITE'),
    params: StreamParams,
    body: DeleteRecordsBody,
    handler: ({ services, project, params, body }) => deleteRecords(services, project.id, params.streamId, body),
  }),
  route({
    method: 'POST',
    path: '/streams/:streamId/records/filter',
    capability: records('READ'),
    alsoNeeds: schemaRead,
    params: StreamParams,
    body: FilterRecordsBody,
    handler: ({ services, project, params, body }) => filterRecords(services, project.id, params.streamId, body),
  }),
  route({
    method: 'POST',
    path: '/streams/:streamId/records/sync',
    capability: records('READ'),
    alsoNeeds: schemaRead,
    params: StreamParams,
    body: SyncRecordsBody,
    handler: ({ services, project, params, body }) => syncRecords(services, project.id, params.streamId, body),
  }),
  route({
    method: 'POST',
    path: '/streams/:streamId/records/aggregate',
    capability: records('READ'),
    alsoNeeds: schemaRead,
    params: StreamParams,
    body: AggregateRecordsBody,
    handler: ({ services, project, params, body, version }) => aggregateRecords(services, project.id, params.streamId, body, version.at('recordAggregateIdentifiers')),
  }),
];
