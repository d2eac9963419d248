#!/usr/bin/env node
/**
 * Command-line entry points: `strata serve`, `strata token`, `strata evals ...`.
 */
import { CONFIG_HELP, ConfigError, loadConfig, type Config } from './config.js';
import { buildApp } from './http/app.js';
import { appSchema } from './resources/tables.js';
import { migrate, SchemaTooNew } from './storage/migrate.js';
import { openStore } from './storage/open.js';
import { StoreUnavailable } from './storage/store.js';
import { BlobStoreUnreachable } from './storage/blobs/s3-store.js';

const USAGE = `usage: strata <command> [options]

commands:
  serve            start the server (default)
  token            print an access token of the built-in identity provider's dev client
  migrate          bring the database to this build's schema, then exit (serve does it at start too)
  evals validate PATH                 check an agent evaluation suite and the files it includes
  evals resolve PATH [--agent NAME]   print each case of a suite as it will run (--format json|table)

options (each also read from the environment variable named):
${CONFIG_HELP}`;

async function serve(config: Config): Promise<void> {
  const started = performance.now();
  const strata = await buildApp(config);
  const address = await strata.app.listen({ host: config.host, port: config.port });
  const base = config.publicUrl;
  const project = config.projects[0];
  const { clientId, secret } = strata.idp.devClient;
  const ms = Math.round(performance.now() - started);
  process.stdout.write(`Strata is listening on ${address} (ready in ${ms} ms; data in ${strata.store.location})

  Projects:       ${config.projects.join(', ')}
  Base URL:       ${base}/api/v1/projects/${project}
  Token URL:      ${base}/oauth2/token
  Client id:      ${clientId}
  Client secret:  ${secret}

Get a token and call the API:

  TOKEN=$(curl -s ${base}/oauth2/token -d grant_type=client_credentials \\
    -d client_id=${clientId} -d client_secret=${secret} | sed -E 's/.*"access_token":"([^"]+)".*/\\1/')
  curl -s ${base}/api/v1/projects/${project}/events -H "Authorization: Bearer $TOKEN"

`);
  const stop = async () => {
    await strata.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

async function printToken(config: Config): Promise<void> {
  const strata = await buildApp({ ...config, projects: [] }, { logger: false });
  try {
    const token = await strata.idp.issueToken(strata.idp.devClient);
    process.stdout.write(token.access_token + '\n');
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
  if (command === 'help' || args.includes('--help')) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  try {
    const config = loadConfig(args);
    if (command === 'serve') await serve(config);
    else if (command === 'token') await printToken(config);
    else if (command === 'migrate') {
      await runMigrate(config);
      return 0;
    }
    else {
      process.stderr.write(`unknown command "${command}"\n\n${USAGE}\n`);
      return 2;
    }
    return -1;
  } catch (err) {
    if (err instanceof ConfigError || err instanceof SchemaTooNew) {
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
