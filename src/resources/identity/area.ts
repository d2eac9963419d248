/** The organization and identity service: organizations, their projects, principals and login sessions. */
import type { Area } from '../../http/area.js';
import { registerIdentityRoutes } from './routes.js';
import { identityTables } from './schema.js';
import { IDENTITY_SETTINGS } from './settings.js';

export const identityArea: Area = {
  name: 'organizations and identity',
  routes: [],
  tables: identityTables,
  config: IDENTITY_SETTINGS,
  serve: registerIdentityRoutes,
};
