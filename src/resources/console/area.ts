/**
 * The web console's part of the project API: the request log (src/http/request-log.ts). The console itself is
 * static files (static.ts) that use the public API with the signed-in user's token.
 */
import { Type } from '@sinclair/typebox';
import type { Area } from '../../http/area.js';
import { route } from '../../http/route.js';

const requestsRoute = route({
  method: 'GET',
  path: '/console/requests',
  capability: null,
  summary: "The project's recent requests (newest first) whose operation's capability the caller holds for the whole project",
  params: Type.Object({ project: Type.String() }),
  handler: ({ params, principal, services }) => ({ items: services.requestLog!.entries(params.project, principal) }),
});

export const consoleArea: Area = { name: 'console', routes: [requestsRoute] };
