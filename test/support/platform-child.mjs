// A second Strata process for tests of the storage platform, on the compiled build (`npm test` builds dist/):
//   node test/support/platform-child.mjs <database URL or data directory> write-change <area> <projectId> <key>
//     records one change in a committed transaction, prints "committed" and exits;
//   node test/support/platform-child.mjs <database URL or data directory> run-jobs <kind>
//     runs jobs of that kind: each prints "started <id> <attempt>" and holds until the process is killed.
import { ChangeFeed } from '../../dist/storage/changes.js';
import { systemClock } from '../../dist/storage/clock.js';
import { Jobs } from '../../dist/storage/jobs/jobs.js';
import { openStore } from '../../dist/storage/open.js';
import { sql } from '../../dist/storage/sql.js';

const [where, command, ...args] = process.argv.slice(2);
const store = where.startsWith('postgres') ? openStore({ dataDir: ':memory:', databaseUrl: where }) : openStore({ dataDir: where });
const changes = new ChangeFeed(systemClock, store);
await changes.start();

if (command === 'write-change') {
  const [area, projectId, key] = args;
  await store.transaction(async (tx) => {
    await tx.get(sql`SELECT 1 AS one`);
    await changes.record(tx, [{ area, projectId: Number(projectId), key }]);
  });
  process.stdout.write('committed\n');
  await changes.close();
  await store.close();
} else if (command === 'run-jobs') {
  const jobs = new Jobs({ db: store, clock: systemClock, changes });
  jobs.register(args[0], (job) => {
    process.stdout.write(`started ${job.id} ${job.attempts}\n`);
    return new Promise(() => {});
  });
  // The runner's timers do not hold a process open (a server's listening socket does): this one stays until killed.
  setInterval(() => {}, 60_000);
  process.stdout.write('ready\n');
} else {
  process.stderr.write(`unknown command ${command}\n`);
  process.exit(2);
}
