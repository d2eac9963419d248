/**
 * Tests that need a program outside Node.js (redis-server, PostgreSQL, python3, prlimit) run when it is installed.
 * When it is not, they are skipped with a one-line notice naming the program and its Debian package, unless
 * STRATA_REQUIRE_EXTERNAL=1 (set by .ci/run), which makes its absence a failure.
 */
import { spawnSync } from 'node:child_process';

const checked = new Map<string, boolean>();

/** Whether `program` can be run here; prints the notice (or throws under STRATA_REQUIRE_EXTERNAL) when not. */
export function hasProgram(program: string, debianPackage: string, versionArg = '--version', env?: NodeJS.ProcessEnv): boolean {
  let found = checked.get(program);
  if (found === undefined) {
    const run = spawnSync(program, [versionArg], { stdio: 'ignore', ...(env ? { env } : {}) });
    found = !run.error && run.status === 0;
    checked.set(program, found);
    if (!found) {
      const absent = `${program} is not installed (Debian package ${debianPackage}; .ci/run installs it)`;
      if (process.env.STRATA_REQUIRE_EXTERNAL === '1') throw new Error(`${absent}, and STRATA_REQUIRE_EXTERNAL=1 requires it`);
      console.warn(`skipped: the tests that need ${program}, because ${absent}`);
    }
  }
  return found;
}
