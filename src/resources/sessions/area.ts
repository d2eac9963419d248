/** Sessions, which let a job act for the principal that made it (their tables are the authentication layer's). */
import type { Area } from '../../http/area.js';
import { sessionRoutes } from './routes.js';

export const sessionsArea: Area = { name: 'sessions', routes: sessionRoutes };
