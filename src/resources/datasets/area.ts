/** The data sets area. */
import type { Area } from '../../http/area.js';
import { emptyCollectionsStep } from '../model.js';
import { dataSetModel } from './model.js';
import { dataSetRoutes } from './routes.js';

export const dataSetsArea: Area = { name: 'data sets', routes: dataSetRoutes, tables: dataSetModel.tables, steps: [emptyCollectionsStep(dataSetModel)] };
