/** The assets area. */
import type { Area } from '../../http/area.js';
import { emptyCollectionsStep } from '../model.js';
import { assetModel } from './model.js';
import { assetRoutes } from './routes.js';

export const assetsArea: Area = { name: 'assets', routes: assetRoutes, tables: assetModel.tables, steps: [emptyCollectionsStep(assetModel)] };
