#!/usr/bin/env bash
# Runs the official Python SDK's (8.x) data modeling, time series and data point integration tests against a
# Strata started from this checkout, after writing the data their fixtures expect to find (python/*.py).
# Usage: scripts/sdk-tests/run-python.sh PATH_TO_COGNITE_SDK_PYTHON [PYTEST_ARGS...]
# The SDK runs from its checkout, unchanged, on the system Python with Debian's packages (PyPI is not used):
#   apt-get install python3-httpx python3-msal python3-authlib python3-protobuf python3-pytest \
#     python3-pytest-xdist python3-dotenv python3-numpy python3-pandas python3-anyio python3-yaml
# python/sitecustomize.py bridges the two places where Debian 12's httpx 0.23 is older than the SDK expects.
# What passes and why the rest fails: docs/clients.md.
set -euo pipefail
SDK=$(cd "${1:?usage: run-python.sh PATH_TO_COGNITE_SDK_PYTHON [PYTEST_ARGS...]}" && pwd)
shift
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/strata.sh"
PY=/usr/bin/python3
$PY -c 'import httpx, msal, authlib, google.protobuf, pandas, pytest, dotenv, xdist' 2>/dev/null ||
  { echo "missing Python packages: see the apt-get line at the top of $0" >&2; exit 1; }

TESTS=tests/tests_integration/test_api
ARGS=("$@")
[ ${#ARGS[@]} -eq 0 ] && ARGS=($TESTS/test_data_modeling $TESTS/test_time_series.py $TESTS/test_datapoints.py)

# Two more clients of the built-in provider: the principals tests list three principals.
export STRATA_CLIENTS='[{"clientId":"sdk-reader","clientSecret":"sdk-reader-secret","groups":[]},{"clientId":"sdk-writer","clientSecret":"sdk-writer-secret","groups":[]}]'
start_strata "${STRATA_SDK_SCRATCH:-/tmp/strata-sdk-python}/data"
TOKEN=$(strata_token)
$PY "$HERE/python/movie_model.py" "$BASE_URL" "$PROJECT" "$TOKEN"
cd "$SDK"
# The data point tests read the SDK test project's time series, which the SDK's own generator writes (a few
# minutes: about 9 million points).
PYTHONPATH="$HERE/python:$SDK" $PY "$HERE/python/standing_data.py" "$BASE_URL" "$PROJECT" "$TOKEN"
LOGIN_FLOW=client_credentials COGNITE_TOKEN_URL=$BASE_URL/oauth2/token COGNITE_CLIENT_ID=strata-admin \
  COGNITE_CLIENT_SECRET=$SECRET COGNITE_TOKEN_SCOPES=strata COGNITE_CLIENT_NAME=strata-sdk-tests \
  COGNITE_PROJECT=$PROJECT COGNITE_BASE_URL=$BASE_URL AUTHLIB_INSECURE_TRANSPORT=1 \
  CDF_CLIENT_ID=strata-admin CDF_CLIENT_SECRET=$SECRET STRATA_IDENTITY_URL=$BASE_URL \
  PYTHONPATH="$HERE/python:$SDK" \
  $PY -m pytest "${ARGS[@]}" -p no:cacheprovider -o addopts= -q -rfE --tb=line
