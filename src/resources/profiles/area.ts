/**
 * User profiles: the people who called a project. Deprecated by the reference from 2025-02-15 in favour of
 * the principals operations (the dated row `userProfilesApi`, which every profiles route names as
 * `deprecatedBy`): from that version on each answer carries a `Deprecation` header with that date, and the
 * operations keep working.
 */
import type { Area } from '../../http/area.js';
import { profileRoutes } from './routes.js';

export const profilesArea: Area = { name: 'user profiles', routes: profileRoutes };
