/**
 * User profiles: the people who called a project. Deprecated by the reference from 2025-02-15 in favour of
 * the principals operations (the dated row `userProfilesApi`): from that version on each answer carries a
 * `Deprecation` header (RFC 9745) with that date, and the operations keep working.
 */
import type { Area } from '../../http/area.js';
import { API_PREFIX } from '../../http/route.js';
import { profileRoutes } from './routes.js';

/** 2025-02-15T00:00:00Z, in the header's form (`@` and seconds since the epoch). */
const DEPRECATED_SINCE = `@${Date.UTC(2025, 1, 15) / 1000}`;
const PROFILE_ROUTES = new Set(profileRoutes.map((r) => `${API_PREFIX}${r.path}`));

export const profilesArea: Area = {
  name: 'user profiles',
  routes: profileRoutes,
  async serve(app) {
    app.addHook('onSend', async (req, reply, payload) => {
      if (PROFILE_ROUTES.has(req.routeOptions.url ?? '') && req.apiVersion?.at('userProfilesApi') === 'deprecated') reply.header('deprecation', DEPRECATED_SINCE);
      return payload;
    });
  },
};
