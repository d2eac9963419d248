/**
 * Authentication workload (issue 4): what token verification costs on a small request. GET /events/{id}
 * with a bearer token (verified once, then served from the cache of resolved principals) against the same
 * route on an app whose authentication resolves every token to a pre-verified principal (BuildOptions.wrapAuth). Both apps run in this process on
 * the same data directory, with throttling off, and are measured in short alternating rounds; the ratio is
 * the median of the rounds' pairwise ratios, which a busy machine disturbs least.
 */
import { loadConfig } from '../src/config.js';
import { buildApp, type Strata } from '../src/app.js';
import type { Principal } from '../src/auth/principal.js';
import type { BenchContext, Suite } from './lib/context.js';
import { expectStatus } from './lib/http.js';
import { closedLoop } from './lib/load.js';
import { PROJECT } from './lib/servers.js';
import { storeEnv } from './lib/backend.js';
import { fmtInt, fmtRatio } from './lib/stats.js';

const EVENTS = 1000;
const TARGET = 0.9;
const ROUNDS = 6;

/** The principal the built-in administrator's token resolves to. */
const ADMIN: Principal = {
  subject: 'strata-admin',
  clientId: 'strata-admin',
  projects: '*',
  grants: [{ acl: '*', actions: ['*'], scope: { all: {} }, projects: '*' }],
};

async function startApp(dataDir: string, principal?: Principal): Promise<{ strata: Strata; origin: string }> {
  const config = loadConfig([], { ...storeEnv(dataDir), STRATA_PROJECTS: PROJECT, STRATA_LOG_LEVEL: 'error', STRATA_PORT: '0', STRATA_THROTTLE: 'off' });
  const strata = await buildApp(config, { logger: false, ...(principal ? { wrapAuth: (auth) => ({ ...auth, cachedPrincipal: () => principal }) } : {}) });
  const origin = await strata.app.listen({ host: '127.0.0.1', port: 0 });
  return { strata, origin };
}

async function seed(ctx: BenchContext): Promise<number[]> {
  const items = Array.from({ length: EVENTS }, (_, i) => ({ externalId: `auth-bench-${i}`, type: 'auth', description: `event ${i}`, metadata: { n: String(i) } }));
  const res = expectStatus(await ctx.call('POST', '/events', { items }), 201, 'POST /events (auth workload)');
  return (JSON.parse(res.body.toString('utf8')) as { items: Array<{ id: number }> }).items.map((e) => e.id);
}

export const authSuite: Suite = {
  name: 'auth',
  async run(ctx) {
    const ids = await seed(ctx);
    const verified = await startApp(ctx.dataDir);
    const preVerified = await startApp(ctx.dataDir, ADMIN);
    try {
      const { access_token: token } = (
        await verified.strata.app.inject({
          method: 'POST',
          url: '/oauth2/token',
          payload: new URLSearchParams({
            grant_type: 'client_credentials',
            client_id: verified.strata.idp.devClient.clientId,
            client_secret: verified.strata.idp.devClient.secret,
          }).toString(),
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        })
      ).json() as { access_token: string };
      const headers = { authorization: `Bearer ${token}` };
      const { concurrency, durationMs } = ctx.settings;
      const measure = (origin: string, ms: number) =>
        closedLoop({
          concurrency,
          durationMs: ms,
          fn: async (i) => {
            const url = `${origin}/api/v1/projects/${PROJECT}/events/${ids[i % ids.length]}`;
            const res = await ctx.client.request('GET', url, undefined, headers);
            if (res.status !== 200) throw new Error(`GET ${url}: HTTP ${res.status} ${res.body.toString('utf8').slice(0, 200)}`);
          },
        });

      const roundMs = Math.max(500, Math.round(durationMs / 3));
      ctx.log(`auth: GET by id with verification vs pre-verified principal, ${concurrency} concurrent, ${ROUNDS} rounds of ${roundMs} ms each`);
      await measure(verified.origin, 1000);
      await measure(preVerified.origin, 1000);
      const withToken: number[] = [];
      const without: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        // Alternate which side goes first, so drift in the machine's load does not favour one of them.
        const first = round % 2 === 0;
        if (!first) without.push((await measure(preVerified.origin, roundMs)).perSecond);
        withToken.push((await ctx.profiled(`auth-get-by-id-${round}`, () => measure(verified.origin, roundMs))).perSecond);
        if (first) without.push((await measure(preVerified.origin, roundMs)).perSecond);
      }
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      const pairs = withToken.map((w, i) => w / without[i]).sort((a, b) => a - b);
      const ratio = (pairs[(pairs.length - 1) >> 1] + pairs[pairs.length >> 1]) / 2;
      const rps = mean(withToken);
      const reference = mean(without);
      ctx.report({
        id: 'auth.getById',
        workload: `GET /events/{id} with bearer token verification, ${concurrency} concurrent (in process, throttling off)`,
        value: `${fmtInt(rps)} req/s`,
        reference: `same route, pre-verified principal: ${fmtInt(reference)} req/s`,
        ratio: `${fmtRatio(ratio)} of pre-verified (median of ${ROUNDS} paired rounds)`,
        target: `ratio ≥ ${TARGET}`,
        met: ratio >= TARGET,
        data: { rounds: { withToken, preVerified: without }, pairRatios: pairs, rps, referenceRps: reference, ratio },
      });
      ctx.note(
        'Auth reference: a second Strata app on the same data whose requests all carry a pre-verified administrator principal (BuildOptions.wrapAuth); both apps run in the load generator process, alternating rounds.',
      );
    } finally {
      await verified.strata.close();
      await preVerified.strata.close();
    }
  },
};
