/** Groups, which grant capabilities (their tables are the authentication layer's, src/auth/schema.ts). */
import type { Area } from '../../http/area.js';
import { groupRoutes } from './routes.js';

export const groupsArea: Area = { name: 'groups', routes: groupRoutes };
