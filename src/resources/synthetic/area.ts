/** Synthetic time series: expressions over time series, computed when queried. */
import type { Area } from '../../http/area.js';
import { syntheticRoutes } from './routes.js';

export const syntheticArea: Area = { name: 'synthetic time series', routes: syntheticRoutes };
