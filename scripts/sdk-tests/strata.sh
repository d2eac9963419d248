# Starts Strata from this checkout on STRATA_SDK_PORT with a throwaway store in $1 and stops it on exit.
# Sourced by run-js.sh and run-python.sh.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PORT=${STRATA_SDK_PORT:-4799}
PROJECT=sdk-test
SECRET=sdk-test-secret
BASE_URL=http://localhost:$PORT

start_strata() {
  local data=$1
  [ -f "$ROOT/dist/cli.js" ] || (cd "$ROOT" && npm run build >/dev/null)
  rm -rf "$data" && mkdir -p "$data"
  STRATA_DEV_CLIENT_SECRET=$SECRET node "$ROOT/dist/cli.js" serve --port "$PORT" --data-dir "$data" --projects "$PROJECT" >"$data/server.log" 2>&1 &
  STRATA_PID=$!
  trap 'kill $STRATA_PID 2>/dev/null' EXIT
  for _ in $(seq 1 100); do
    curl -sf "$BASE_URL/health/ready" >/dev/null && return 0
    kill -0 $STRATA_PID 2>/dev/null || { cat "$data/server.log"; exit 1; }
    sleep 0.2
  done
  echo "Strata did not become ready on $BASE_URL" >&2
  exit 1
}

strata_token() {
  curl -s "$BASE_URL/oauth2/token" -d grant_type=client_credentials -d client_id=strata-admin -d client_secret=$SECRET |
    sed -E 's/.*"access_token":"([^"]+)".*/\1/'
}
