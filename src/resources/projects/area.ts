/** The project's own settings (identity provider configuration, limits). */
import type { Area } from '../../http/area.js';
import { projectRoutes } from './routes.js';

export const projectsArea: Area = { name: 'projects', routes: projectRoutes };
