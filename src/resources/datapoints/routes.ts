/**
 * The data point operations. Inserting and deleting need `timeSeriesAcl:WRITE`, reading `timeSeriesAcl:READ`.
 */
import { route, type ApiRoute } from '../../http/route.js';
import { acceptsProtobuf, decodeInsertionRequest } from './protobuf.js';
import { latestDatapoints, listDatapoints, listDatapointsProtobuf } from './read-service.js';
import { DeleteDatapointsBody, InsertDatapointsBody, LatestDatapointsBody, ListDatapointsBody } from './schema.js';
import { deleteDatapoints, insertDatapoints } from './write-service.js';

const READ = { acl: 'timeSeriesAcl', action: 'READ' };
const WRITE = { acl: 'timeSeriesAcl', action: 'WRITE' };

export const datapointRoutes: ApiRoute[] = [
  route({
    method: 'POST',
    path: '/timeseries/data',
    capability: WRITE,
    body: InsertDatapointsBody,
    protobufBody: decodeInsertionRequest,
    handler: async ({ services, project, body, version }) => {
      await insertDatapoints(services, project.id, body, version.at('stringDatapointMaxLength'));
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/timeseries/data/list',
    capability: READ,
    body: ListDatapointsBody,
    // JSON, or protocol buffers for a client that asks for them (the official Python SDK reads data points so).
    handler: ({ services, project, body, headers }) =>
      (acceptsProtobuf(headers.accept) ? listDatapointsProtobuf : listDatapoints)(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/timeseries/data/latest',
    capability: READ,
    body: LatestDatapointsBody,
    handler: ({ services, project, body }) => latestDatapoints(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/timeseries/data/delete',
    capability: WRITE,
    body: DeleteDatapointsBody,
    handler: async ({ services, project, body }) => {
      await deleteDatapoints(services, project.id, body);
      return {};
    },
  }),
];
