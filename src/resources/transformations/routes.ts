/**
 * The transformations operations: transformations under `/transformations`, their jobs under
 * `/transformations/jobs`, query previews, the schemas of the destinations, and notification addresses.
 */
import { route, type ApiRoute } from '../../http/route.js';
import { deleteItems, type ResourceSpec } from '../crud.js';
import {
  CancelBody,
  CreateDataSourcesBody,
  DeleteDataSourcesBody,
  ListDataSourcesQuery,
  VerifyDataSourceBody,
  CreateSchedulesBody,
  ListSchedulesQuery,
  ScheduleIdsBody,
  UpdateSchedulesBody,
  CreateNotificationsBody,
  CreateTransformationsBody,
  DeleteNotificationsBody,
  DeleteTransformationsBody,
  FilterTransformationsBody,
  JobIdParams,
  JobIdsBody,
  ListJobsQuery,
  ListNotificationsQuery,
  ListTransformationsQuery,
  PreviewBody,
  RunBody,
  SchemaParams,
  SchemaQuery,
  InstanceSchemaQuery,
  SequenceRowSchemaQuery,
  TransformationIdsBody,
  UpdateTransformationsBody,
} from './schema.js';
import {
  cancelTransformation,
  createTransformations,
  destinationSchema,
  instanceSchema,
  sequenceRowSchema,
  jobMetrics,
  jobsByIds,
  listJobs,
  listTransformations,
  previewQuery,
  runTransformation,
  transformationsByIds,
  transformationSpec,
  updateTransformations,
  withoutOthersPrivate,
} from './service.js';
import { createNotifications, deleteNotifications, listNotifications } from './notifications.js';
import { createDataSources, deleteDataSources, listDataSources, verifyDataSource } from './datasources.js';
import { createSchedules, deleteSchedules, listSchedules, schedulesByIds, updateSchedules } from './schedules.js';

const spec = transformationSpec as ResourceSpec<unknown>;
const acl = (action: 'READ' | 'WRITE') => ({ acl: 'transformationsAcl', action });

export const transformationRoutes: ApiRoute[] = [
  route({
    method: 'POST',
    path: '/transformations',
    capability: acl('WRITE'),
    body: CreateTransformationsBody,
    handler: async ({ services, principal, project, body }) => ({ items: await createTransformations(services, principal, project, body.items) }),
  }),
  route({
    method: 'GET',
    path: '/transformations',
    capability: acl('READ'),
    query: ListTransformationsQuery,
    handler: ({ services, principal, project, query }) =>
      listTransformations(services, principal, project, {
        limit: query.limit,
        cursor: query.cursor,
        withJobDetails: query.withJobDetails,
        ...(query.includePublic === false ? { filter: { isPublic: false } } : {}),
      }),
  }),
  route({
    method: 'POST',
    path: '/transformations/filter',
    capability: acl('READ'),
    body: FilterTransformationsBody,
    handler: ({ services, principal, project, body }) => listTransformations(services, principal, project, body),
  }),
  route({
    method: 'POST',
    path: '/transformations/byids',
    capability: acl('READ'),
    body: TransformationIdsBody,
    handler: ({ services, principal, project, body }) => transformationsByIds(services, principal, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/transformations/update',
    capability: acl('WRITE'),
    body: UpdateTransformationsBody,
    handler: async ({ services, principal, project, body }) => ({
      items: await updateTransformations(services, principal, project, await withoutOthersPrivate(services, principal, project.id, body.items)),
    }),
  }),
  route({
    method: 'POST',
    path: '/transformations/delete',
    capability: acl('WRITE'),
    body: DeleteTransformationsBody,
    handler: async ({ services, principal, project, body }) => {
      await deleteItems(spec, services, project.id, await withoutOthersPrivate(services, principal, project.id, body.items, body.ignoreUnknownIds), body.ignoreUnknownIds);
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/transformations/run',
    capability: acl('WRITE'),
    body: RunBody,
    handler: async ({ services, principal, project, body }) => runTransformation(services, project, (await withoutOthersPrivate(services, principal, project.id, [body]))[0]),
  }),
  route({
    method: 'POST',
    path: '/transformations/cancel',
    capability: acl('WRITE'),
    body: CancelBody,
    handler: async ({ services, principal, project, body }) => cancelTransformation(services, project.id, (await withoutOthersPrivate(services, principal, project.id, [body]))[0]),
  }),
  route({
    method: 'GET',
    path: '/transformations/jobs',
    capability: acl('READ'),
    query: ListJobsQuery,
    handler: ({ services, principal, project, query }) => listJobs(services, principal, project.id, query),
  }),
  route({
    method: 'POST',
    path: '/transformations/jobs/byids',
    capability: acl('READ'),
    body: JobIdsBody,
    handler: ({ services, principal, project, body }) => jobsByIds(services, principal, project.id, body.items, body.ignoreUnknownIds),
  }),
  route({
    method: 'GET',
    path: '/transformations/jobs/:id/metrics',
    capability: acl('READ'),
    params: JobIdParams,
    handler: ({ services, principal, project, params }) => jobMetrics(services, principal, project.id, params.id),
  }),
  route({
    method: 'POST',
    path: '/transformations/query/run',
    capability: acl('READ'),
    body: PreviewBody,
    handler: ({ services, project, headers, body, signal }) => previewQuery(services, project, headers.authorization, body, signal),
  }),
  route({
    method: 'GET',
    path: '/transformations/schema/instances',
    capability: acl('READ'),
    query: InstanceSchemaQuery,
    handler: ({ services, project, headers, query }) => instanceSchema(services, project, headers.authorization, query),
  }),
  route({
    method: 'GET',
    path: '/transformations/schema/sequence_rows',
    capability: acl('READ'),
    query: SequenceRowSchemaQuery,
    handler: ({ services, project, headers, query }) => sequenceRowSchema(services, project, headers.authorization, query.externalId),
  }),
  route({
    method: 'GET',
    path: '/transformations/schema/:schemaType',
    capability: acl('READ'),
    params: SchemaParams,
    query: SchemaQuery,
    handler: ({ params }) => destinationSchema(params.schemaType),
  }),
  route({
    method: 'POST',
    path: '/transformations/notifications',
    capability: acl('WRITE'),
    body: CreateNotificationsBody,
    handler: async ({ services, principal, project, body }) => ({ items: await createNotifications(services, principal, project.id, body.items) }),
  }),
  route({
    method: 'GET',
    path: '/transformations/notifications',
    capability: acl('READ'),
    query: ListNotificationsQuery,
    handler: ({ services, principal, project, query }) => listNotifications(services, principal, project.id, query),
  }),
  route({
    method: 'POST',
    path: '/transformations/notifications/delete',
    capability: acl('WRITE'),
    body: DeleteNotificationsBody,
    handler: async ({ services, principal, project, body }) => {
      await deleteNotifications(services, principal, project.id, body.items);
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/transformations/schedules',
    capability: acl('WRITE'),
    body: CreateSchedulesBody,
    handler: async ({ services, principal, project, body }) => ({ items: await createSchedules(services, project, await withoutOthersPrivate(services, principal, project.id, body.items)) }),
  }),
  route({
    method: 'GET',
    path: '/transformations/schedules',
    capability: acl('READ'),
    query: ListSchedulesQuery,
    handler: ({ services, principal, project, query }) => listSchedules(services, principal, project.id, query),
  }),
  route({
    method: 'POST',
    path: '/transformations/schedules/byids',
    capability: acl('READ'),
    body: ScheduleIdsBody,
    handler: async ({ services, principal, project, body }) =>
      schedulesByIds(services, project.id, await withoutOthersPrivate(services, principal, project.id, body.items, body.ignoreUnknownIds), body.ignoreUnknownIds),
  }),
  route({
    method: 'POST',
    path: '/transformations/schedules/update',
    capability: acl('WRITE'),
    body: UpdateSchedulesBody,
    handler: async ({ services, principal, project, body }) => ({ items: await updateSchedules(services, project, await withoutOthersPrivate(services, principal, project.id, body.items)) }),
  }),
  route({
    method: 'POST',
    path: '/transformations/schedules/delete',
    capability: acl('WRITE'),
    body: ScheduleIdsBody,
    handler: async ({ services, principal, project, body }) =>
      deleteSchedules(services, project.id, await withoutOthersPrivate(services, principal, project.id, body.items, body.ignoreUnknownIds), body.ignoreUnknownIds),
  }),
  route({
    method: 'POST',
    path: '/transformations/externaldata',
    summary: 'Create external data sources',
    capability: acl('WRITE'),
    body: CreateDataSourcesBody,
    status: 201,
    handler: async ({ services, project, body, version }) => ({ items: await createDataSources(services, project.id, body.items, version.at('externalDataSourceCreate')) }),
  }),
  route({
    method: 'GET',
    path: '/transformations/externaldata',
    summary: 'List external data sources',
    capability: acl('READ'),
    query: ListDataSourcesQuery,
    handler: ({ services, project, query }) => listDataSources(services, project.id, query),
  }),
  route({
    method: 'POST',
    path: '/transformations/externaldata/delete',
    summary: 'Delete external data sources',
    capability: acl('WRITE'),
    body: DeleteDataSourcesBody,
    handler: async ({ services, project, body }) => {
      await deleteDataSources(services, project.id, body.items);
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/transformations/externaldata/usability',
    summary: 'Verify that an external data source can be used',
    capability: acl('READ'),
    body: VerifyDataSourceBody,
    handler: ({ body }) => verifyDataSource(body.externalId),
  }),
];
