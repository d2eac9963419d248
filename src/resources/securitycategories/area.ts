/** Security categories: named ids that restrict who sees the files put in them. */
import type { Area } from '../../http/area.js';
import { securityCategoryRoutes } from './routes.js';
import { securityCategoryTables } from './schema.js';

export const securityCategoriesArea: Area = { name: 'security categories', routes: securityCategoryRoutes, tables: securityCategoryTables };
