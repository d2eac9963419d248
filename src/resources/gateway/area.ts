/** The Postgres gateway area: users as login roles of the database, and the tables (views) each may read. */
import type { Area } from '../../http/area.js';
import { gatewayTableModel, gatewayUserModel } from './model.js';
import { scopeTable } from './roles.js';
import { gatewayRoutes } from './routes.js';
import { GATEWAY_SETTINGS } from './settings.js';

export const gatewayArea: Area = {
  name: 'postgres gateway',
  routes: gatewayRoutes,
  tables: [...gatewayUserModel.tables, ...gatewayTableModel.tables, scopeTable],
  config: GATEWAY_SETTINGS,
};
