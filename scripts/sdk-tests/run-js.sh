#!/usr/bin/env bash
# Runs the official JavaScript SDK's integration tests (core, data modeling, functions, and the alpha
# package's workflows and simulators) against a Strata started from this checkout.
# Usage: scripts/sdk-tests/run-js.sh PATH_TO_COGNITE_SDK_JS [SPEC_FILE...]
# The SDK checkout is not changed: its packages are copied to a scratch directory (STRATA_SDK_SCRATCH,
# default /tmp/strata-sdk-js), where vitest and the tests' few dependencies are installed from the npm
# registry. What passes and why the rest fails: docs/clients.md.
set -euo pipefail
SDK=$(cd "${1:?usage: run-js.sh PATH_TO_COGNITE_SDK_JS [SPEC_FILE...]}" && pwd)
shift
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/strata.sh"
SCRATCH=${STRATA_SDK_SCRATCH:-/tmp/strata-sdk-js}

mkdir -p "$SCRATCH"
rm -rf "$SCRATCH/packages" && cp -r "$SDK/packages" "$SDK"/tsconfig*.json "$SCRATCH/"
cp "$HERE/js/vitest.config.ts" "$HERE/js/strata-login.ts" "$SCRATCH/"
if [ ! -d "$SCRATCH/node_modules/vitest" ]; then
  (cd "$SCRATCH" && echo '{"name":"strata-sdk-js-run","private":true,"type":"module"}' >package.json &&
    npm install --no-audit --no-fund vitest@2 cross-fetch@3 lodash geojson @types/geojson nock@13.5.6 >/dev/null)
fi

API=packages/stable/src/__tests__/api
SPECS=("$@")
if [ ${#SPECS[@]} -eq 0 ]; then
  SPECS=($API/{assets,events,datasets,timeseries,timeseriesWithUnits,datapoints,dataPointSubscriptions,unitsApi,sequences,groups,sessions,projects,cogniteClient}.int.spec.ts
    $API/{spaces,containers,views,viewApi,datamodels,instances}.int.spec.ts
    $API/functions.int.spec.ts
    packages/alpha/src/__tests__/api/{workflows,workflowVersions,workflowExecutions}.int.spec.ts
    packages/alpha/src/__tests__/api/{simulatorsApi,simulationRunsApi}.int.spec.ts
    packages/alpha/src/__tests__/api/{simulatorIntegrationsApi,simulatorModelsApi,simulatorRoutinesApi}.spec.ts
    packages/beta/src/__tests__/cogniteClient.int.spec.ts)
fi

start_strata "$SCRATCH/data"
cd "$SCRATCH"
COGNITE_BASE_URL=$BASE_URL COGNITE_PROJECT=$PROJECT COGNITE_CLIENT_ID=strata-admin COGNITE_CLIENT_SECRET=$SECRET \
  npx vitest run "${SPECS[@]}" --reporter=verbose
