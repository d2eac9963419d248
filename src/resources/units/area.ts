/** The units catalog. */
import type { Area } from '../../http/area.js';
import { unitRoutes } from './routes.js';

export const unitsArea: Area = { name: 'units', routes: unitRoutes };
