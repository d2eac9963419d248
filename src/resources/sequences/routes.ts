/**
 * The sequences operations, and those of their rows under `/sequences/data`.
 */
import { route, type ApiRoute } from '../../http/route.js';
import { createItems, deleteItems, retrieveItemsJson, updateItems } from '../crud.js';
import { deleteRows, insertRows, latestRow, listRows } from './rows-service.js';
import {
  AggregateSequencesBody,
  CreateSequencesBody,
  DeleteRowsBody,
  InsertRowsBody,
  LatestRowBody,
  ListRowsBody,
  ListSequencesBody,
  ListSequencesQuery,
  SearchSequencesBody,
  SequenceIdsBody,
  UpdateSequencesBody,
} from './schema.js';
import { aggregateSequences, anySequenceSpec as spec, listSequences, searchSequences, sequenceSpec } from './service.js';

const READ = { acl: 'sequencesAcl', action: 'READ' };
const WRITE = { acl: 'sequencesAcl', action: 'WRITE' };

export const sequenceRoutes: ApiRoute[] = [
  route({
    method: 'POST',
    path: '/sequences',
    capability: WRITE,
    body: CreateSequencesBody,
    status: 201,
    handler: async ({ services, project, body }) => ({ items: await createItems(sequenceSpec, services, project.id, body.items) }),
  }),
  route({
    method: 'GET',
    path: '/sequences',
    capability: READ,
    query: ListSequencesQuery,
    handler: ({ services, project, query }) => listSequences(services, project.id, query),
  }),
  route({
    method: 'POST',
    path: '/sequences/list',
    capability: READ,
    body: ListSequencesBody,
    handler: ({ services, project, body }) => listSequences(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/sequences/byids',
    capability: READ,
    body: SequenceIdsBody,
    handler: ({ services, project, body }) => retrieveItemsJson(spec, services, project.id, body.items, body.ignoreUnknownIds),
  }),
  route({
    method: 'POST',
    path: '/sequences/update',
    capability: WRITE,
    body: UpdateSequencesBody,
    handler: async ({ services, project, body }) => ({ items: await updateItems(spec, services, project.id, body.items) }),
  }),
  route({
    method: 'POST',
    path: '/sequences/delete',
    capability: WRITE,
    body: SequenceIdsBody,
    handler: async ({ services, project, body }) => {
      await deleteItems(spec, services, project.id, body.items, body.ignoreUnknownIds);
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/sequences/search',
    capability: READ,
    body: SearchSequencesBody,
    handler: ({ services, project, body }) => searchSequences(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/sequences/aggregate',
    capability: READ,
    body: AggregateSequencesBody,
    handler: ({ services, project, body }) => aggregateSequences(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/sequences/data',
    capability: WRITE,
    body: InsertRowsBody,
    exactIntegers: true,
    handler: async ({ services, project, body }) => {
      await insertRows(services, project.id, body);
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/sequences/data/list',
    capability: READ,
    body: ListRowsBody,
    handler: ({ services, project, body }) => listRows(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/sequences/data/latest',
    capability: READ,
    body: LatestRowBody,
    handler: ({ services, project, body }) => latestRow(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/sequences/data/delete',
    capability: WRITE,
    body: DeleteRowsBody,
    handler: async ({ services, project, body }) => {
      await deleteRows(services, project.id, body);
      return {};
    },
  }),
];
