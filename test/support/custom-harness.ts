/**
 * Like `startHarness`, with build options as well: test-only operations (`extraRoutes`), a clock to step, a
 * shared database. Also a way to hold requests open until the test lets them go, for concurrency tests.
 */
import type { Config } from '../../src/config.js';
import type { BuildOptions } from '../../src/app.js';
import { route, type ApiRoute, type RouteLimits } from '../../src/http/route.js';
import { startHarness, type Harness } from './harness.js';
import { ManualClock } from './manual-clock.js';

export interface CustomHarnessOptions {
  config?: Partial<Config>;
  env?: Record<string, string>;
  build?: BuildOptions;
}

export function startCustomHarness(opts: CustomHarnessOptions = {}): Promise<Harness> {
  return startHarness(opts.config, opts.env, opts.build);
}

/**
 * Requests that wait in their handler until released. `entered(n)` resolves once n requests in total have
 * reached the handler, so a test knows for certain how many are in flight, without sleeping.
 */
export class Holds {
  private inside = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly watchers: Array<{ n: number; resolve: () => void }> = [];

  /** A GET operation at `path` whose handler holds until released. */
  route(path: string, limits?: RouteLimits): ApiRoute {
    return route({
      method: 'GET',
      path,
      capability: { acl: 'eventsAcl', action: 'READ' },
      ...(limits ? { limits } : {}),
      handler: async () => {
        await this.hold();
        return { held: true };
      },
    });
  }

  private async hold(): Promise<void> {
    this.inside++;
    for (const w of this.watchers.filter((w) => this.inside >= w.n)) {
      this.watchers.splice(this.watchers.indexOf(w), 1);
      w.resolve();
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  entered(n: number): Promise<void> {
    if (this.inside >= n) return Promise.resolve();
    return new Promise((resolve) => this.watchers.push({ n, resolve }));
  }

  releaseOne(): void {
    const next = this.waiting.shift();
    if (!next) throw new Error('no request is being held');
    next();
  }

  releaseAll(): void {
    while (this.waiting.length > 0) this.releaseOne();
  }
}

/**
 * A clock the test steps by hand; it starts at the real time, so tokens issued now are valid by it. Tokens
 * issued later (the harness gets its token once the app is built, which may take seconds on a busy machine)
 * are valid by it after `catchUp()`, which moves it on to the real time if it is behind.
 */
export function manualClock(start = Date.now()): ManualClock {
  return new ManualClock(start);
}
