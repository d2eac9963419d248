#!/usr/bin/env node
/**
 * Command-line entry points: `strata serve`, `strata token`, `strata admin-secret`, `strata evals ...`.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { appSchema, buildApp, type Strata } from './app.js';
import { CONFIG_SECTIONS } from './areas.js';
import { configHelp, ConfigError, loadConfig, type Config } from './config.js';
import { migrate, SchemaTooNew } from './storage/migrate.js';
import { openStore } from './storage/open.js';
import { StoreUnavailable } from './storage/store.js';
import { BlobStoreUnreachable } from './storage/blobs/s3-store.js';

const ADMIN_SECRET_COMMAND = '`strata admin-secret` (from a clone: npm run -s strata -- admin-secret)';

const USAGE = `usage: strata [command] [options]

commands:
  serve                  start the server (the default)
  token                  print an access token of the administrator client, strata-admin
  admin-secret           print the secret of strata-admin (generated at the first start, kept in the store)
  migrate                bring the database to this build's schema, then exit (serve does it at start too)
  evals validate PATH                 check an agent evaluation suite and the files it includes
  evals resolve PATH [--agent NAME]   print each case of a suite as it will run (--format json|table)
  help, -h, --help       print this
  version, -v, --version print the version

options (each also read from the environment variable named; a flag wins over it):
${configHelp(CONFIG_SECTIONS)}`;

function version(): string {
  // The same relative path from src/ and from the compiled dist/.
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/** A port that cannot be listened on, said in one line: the error of a listen attempt, or undefined. */
function listenProblem(err: NodeJS.ErrnoException | undefined, config: Config): string | undefined {
  if (!err) return undefined;
  const where = `port ${config.port} on ${config.host}`;
  if (err.code === 'EADDRINUSE') return `${where} is in use by another program; choose another with --port (or STRATA_PORT)`;
  if (err.code === 'EACCES') return `no permission to listen on ${where}; choose a port above 1023 with --port (or STRATA_PORT)`;
  return `cannot listen on ${where} (${err.message}); check --host and --port`;
}

/** Tries the port before anything is created, so that a busy port leaves no database behind. */
function tryListen(config: Config): Promise<NodeJS.ErrnoException | undefined> {
  const probe = createServer();
  return new Promise((resolve) => {
    probe.once('error', resolve);
    probe.listen({ host: config.host, port: config.port, exclusive: true }, () => probe.close(() => resolve(undefined)));
  });
}

class CannotListen extends Error {}

async function serve(config: Config): Promise<void> {
  const started = performance.now();
  const before = listenProblem(await tryListen(config), config);
  if (before) throw new CannotListen(before);
  const strata = await buildApp(config);
  let address: string;
  try {
    address = await strata.app.listen({ host: config.host, port: config.port });
  } catch (err) {
    await strata.close();
    const problem = listenProblem(err as NodeJS.ErrnoException, config);
    if (problem) throw new CannotListen(problem);
    throw err;
  }
  const base = config.publicUrl;
  const project = config.projects[0];
  const { clientId, secret } = strata.idp.devClient;
  const source = strata.idp.devClientSecretSource;
  // The secret is printed once, when it is made: a log that every start writes is read by more people.
  const [shown, inCurl] =
    source === 'generated'
      ? [`${secret}  (generated now and shown only this once; ${ADMIN_SECRET_COMMAND} prints it)`, secret]
      : source === 'configured'
        ? ['the value of STRATA_DEV_CLIENT_SECRET', '"$STRATA_DEV_CLIENT_SECRET"']
        : [`kept in the store; ${ADMIN_SECRET_COMMAND} prints it`, '<client secret>'];
  const ms = Math.round(performance.now() - started);
  process.stdout.write(`Strata ${version()} is listening on ${address} (ready in ${ms} ms; data in ${strata.store.location})

  Projects:       ${config.projects.join(', ')}
  Base URL:       ${base}/api/v1/projects/${project}
  Token URL:      ${base}/oauth2/token
  Web console:    ${base}/console
  Client id:      ${clientId}
  Client secret:  ${shown}

Get a token and call the API:

  TOKEN=$(curl -fsS ${base}/oauth2/token -d grant_type=client_credentials \\
    -d client_id=${clientId} -d client_secret=${inCurl} | sed -nE 's/.*"access_token":"([^"]+)".*/\\1/p')
  curl -s ${base}/api/v1/projects/${project}/events -H "Authorization: Bearer $TOKEN"

`);
  const stop = async () => {
    await strata.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/** Runs `use` on an app built on the server's store, without its projects or a port. */
async function withApp(config: Config, use: (strata: Strata) => Promise<string>): Promise<void> {
  const strata = await buildApp({ ...config, projects: [] }, { logger: false });
  try {
    process.stdout.write((await use(strata)) + '\n');
  } finally {
    await strata.close();
  }
}

async function runMigrate(config: Config): Promise<void> {
  const store = openStore({ dataDir: config.dataDir, synchronous: config.synchronous, databaseUrl: config.databaseUrl });
  try {
    const { from, to } = await migrate(store, appSchema());
    process.stdout.write(from === to ? `The database at ${store.location} is at schema version ${to}; nothing to do.\n` : `Migrated ${store.location} from schema version ${from} to ${to}.\n`);
  } finally {
    await store.close();
  }
}

async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  const command = first === undefined || first.startsWith('-') ? 'serve' : first;
  const args = command === first ? rest : argv;
  if (command === 'evals') {
    const { runEvalsCommand } = await import('./evals/cli.js');
    return runEvalsCommand(args);
  }
  if (command === 'help' || args.includes('--help') || args.includes('-h')) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  if (command === 'version' || args.includes('--version') || args.includes('-v')) {
    process.stdout.write(`strata ${version()}\n`);
    return 0;
  }
  try {
    const config = loadConfig(args, process.env, CONFIG_SECTIONS);
    if (command === 'serve') await serve(config);
    else if (command === 'token') await withApp(config, async (strata) => (await strata.idp.issueToken(strata.idp.devClient)).access_token);
    else if (command === 'admin-secret') await withApp(config, async (strata) => strata.idp.devClient.secret);
    else if (command === 'migrate') await runMigrate(config);
    else {
      process.stderr.write(`strata: unknown command "${command}"\n\n${USAGE}\n`);
      return 2;
    }
    return command === 'serve' ? -1 : 0;
  } catch (err) {
    if (err instanceof ConfigError || err instanceof SchemaTooNew || err instanceof CannotListen) {
      process.stderr.write(`strata: ${err.message}\n`);
      return 2;
    }
    if (err instanceof BlobStoreUnreachable) {
      process.stderr.write(`strata: STRATA_BLOB_URL (--blob-url): ${err.message}\n`);
      return 2;
    }
    if (err instanceof StoreUnavailable) {
      const cause = (err.cause as Error | undefined)?.message;
      process.stderr.write(`strata: ${err.message}${cause ? ` (${cause})` : ''}; check STRATA_DATABASE_URL (--database-url) and that the database server is running\n`);
      return 2;
    }
    throw err;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`strata: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
