/** The data points of time series: their operations and the chunk and rollup tables they are kept in. */
import type { Area } from '../../http/area.js';
import { datapointRoutes } from './routes.js';
import { datapointTables } from './store-schema.js';

export const datapointsArea: Area = { name: 'data points', routes: datapointRoutes, tables: datapointTables };
