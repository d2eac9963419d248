/** The synthetic time series operation: it reads time series, so it needs `timeSeriesAcl:READ`. */
import { route, type ApiRoute } from '../../http/route.js';
import { syntheticQuery } from './query.js';
import { SyntheticQueryBody } from './schema.js';

export const syntheticRoutes: ApiRoute[] = [
  route({
    method: 'POST',
    path: '/timeseries/synthetic/query',
    capability: { acl: 'timeSeriesAcl', action: 'READ' },
    body: SyntheticQueryBody,
    handler: ({ services, project, body }) => syntheticQuery(services, project.id, body),
  }),
];
