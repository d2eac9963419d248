/** The time series area (their data points are an area of their own). */
import type { Area } from '../../http/area.js';
import { emptyCollectionsStep } from '../model.js';
import { timeSeriesModel } from './model.js';
import { timeSeriesRoutes } from './routes.js';

export const timeSeriesArea: Area = { name: 'time series', routes: timeSeriesRoutes, tables: timeSeriesModel.tables, steps: [emptyCollectionsStep(timeSeriesModel)] };
