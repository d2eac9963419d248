/** The data products area: products and their versions (alpha channel). */
import type { Area } from '../../http/area.js';
import { dataProductModel, dataProductVersionModel } from './model.js';
import { dataProductRoutes } from './routes.js';

export const dataProductsArea: Area = {
  name: 'data products',
  routes: dataProductRoutes,
  tables: [...dataProductModel.tables, ...dataProductVersionModel.tables],
};
