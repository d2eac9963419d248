/** The files area: files' metadata, and their content through signed links. */
import type { Area } from '../../http/area.js';
import { fileLinks } from './content.js';
import { fileTables } from './model.js';
import { fileRoutes } from './routes.js';

export const filesArea: Area = { name: 'files', routes: fileRoutes, links: fileLinks, tables: fileTables };
