/**
 * Every area Strata serves, in one list: the server's operations, its schema and its configuration sections
 * are built from it (src/app.ts, src/cli.ts). Adding an area is adding its descriptor here.
 */
import type { Area } from './http/area.js';
import type { ConfigSection } from './config.js';
import { agentsArea } from './resources/agents/area.js';
import { assetsArea } from './resources/assets/area.js';
import { consoleArea } from './resources/console/area.js';
import { datapointsArea } from './resources/datapoints/area.js';
import { dataProductsArea } from './resources/dataproducts/area.js';
import { dataSetsArea } from './resources/datasets/area.js';
import { entityMatchingArea } from './resources/entitymatching/area.js';
import { eventsArea } from './resources/events/area.js';
import { extpipesArea } from './resources/extpipes/area.js';
import { filesArea } from './resources/files/area.js';
import { functionsArea } from './resources/functions/area.js';
import { gatewayArea } from './resources/gateway/area.js';
import { groupsArea } from './resources/groups/area.js';
import { modelsArea } from './resources/models/area.js';
import { projectsArea } from './resources/projects/area.js';
import { seismicArea } from './resources/seismic/area.js';
import { identityArea } from './resources/identity/area.js';
import { securityCategoriesArea } from './resources/securitycategories/area.js';
import { profilesArea } from './resources/profiles/area.js';
import { sequencesArea } from './resources/sequences/area.js';
import { sessionsArea } from './resources/sessions/area.js';
import { simulatorsArea } from './resources/simulators/area.js';
import { signalsArea } from './resources/signals/area.js';
import { streamsArea } from './resources/streams/area.js';
import { subscriptionsArea } from './resources/subscriptions/area.js';
import { syntheticArea } from './resources/synthetic/area.js';
import { threedArea } from './resources/threed/area.js';
import { timeSeriesArea } from './resources/timeseries/area.js';
import { transformationsArea } from './resources/transformations/area.js';
import { unitsArea } from './resources/units/area.js';
import { workflowsArea } from './resources/workflows/area.js';
import { writebackArea } from './resources/writeback/area.js';

export const AREAS: readonly Area[] = [eventsArea, dataSetsArea, timeSeriesArea, assetsArea, projectsArea, groupsArea, sessionsArea, datapointsArea, subscriptionsArea, syntheticArea, unitsArea, modelsArea, dataProductsArea, filesArea, sequencesArea, extpipesArea, streamsArea, functionsArea, agentsArea, workflowsArea, transformationsArea, writebackArea, gatewayArea, simulatorsArea, entityMatchingArea, seismicArea, signalsArea, securityCategoriesArea, identityArea, profilesArea, threedArea, consoleArea];

/** The areas' configuration sections, for `loadConfig` and `strata help`. */
export const CONFIG_SECTIONS: readonly ConfigSection<unknown>[] = AREAS.flatMap((a) => (a.config ? [a.config] : []));
