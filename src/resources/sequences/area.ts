/** The sequences area: sequences with their columns, and their rows. */
import type { Area } from '../../http/area.js';
import { sequenceModel, sequenceRowsTable } from './model.js';
import { sequenceRoutes } from './routes.js';

export const sequencesArea: Area = { name: 'sequences', routes: sequenceRoutes, tables: [...sequenceModel.tables, sequenceRowsTable] };
