/**
 * One typed configuration object, from command-line flags, then environment variables, then defaults.
 */
import { resolve } from 'node:path';

export interface Config {
  host: string;
  port: number;
  /** Directory of the embedded store, or `:memory:` for a throwaway in-memory store. */
  dataDir: string;
  /** Projects created on start (if missing). */
  projects: string[];
  /** Public origin of this server: the issuer of built-in tokens and the base of printed URLs. */
  publicUrl: string;
  devClientSecret?: string;
  /** Largest request body accepted, in bytes. */
  bodyLimit: number;
  logLevel: string;
  synchronous: 'normal' | 'full';
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

const FLAGS: Record<string, string> = {
  '--port': 'STRATA_PORT',
  '--host': 'STRATA_HOST',
  '--data-dir': 'STRATA_DATA_DIR',
  '--projects': 'STRATA_PROJECTS',
  '--public-url': 'STRATA_PUBLIC_URL',
  '--body-limit': 'STRATA_BODY_LIMIT',
  '--log-level': 'STRATA_LOG_LEVEL',
  '--sync': 'STRATA_SYNC',
};

export const CONFIG_HELP = Object.entries(FLAGS)
  .map(([flag, env]) => `  ${flag.padEnd(14)} (${env})`)
  .join('\n');

function integer(name: string, raw: string, min: number, max: number): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < min || n > max) throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  return n;
}

export function loadConfig(argv: readonly string[], env: Env = process.env): Config {
  const values: Env = { ...env };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2);
    const name = FLAGS[flag];
    if (!name) throw new ConfigError(`unknown option ${flag}\noptions:\n${CONFIG_HELP}`);
    const value = inline ?? argv[++i];
    if (value === undefined) throw new ConfigError(`${flag} needs a value`);
    values[name] = value;
  }

  const port = integer('STRATA_PORT (--port)', values.STRATA_PORT ?? '4000', 0, 65535);
  const host = values.STRATA_HOST ?? '127.0.0.1';
  const dataDirRaw = values.STRATA_DATA_DIR ?? './data';
  const dataDir = dataDirRaw === ':memory:' ? dataDirRaw : resolve(dataDirRaw);
  const projects = (values.STRATA_PROJECTS ?? 'dev')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  for (const p of projects) {
    if (!/^[a-z0-9][a-z0-9-]{0,63}$/.test(p)) {
      throw new ConfigError(`STRATA_PROJECTS: "${p}" is not a valid project name (lower-case letters, digits and '-', at most 64)`);
    }
  }
  const synchronous = values.STRATA_SYNC ?? 'normal';
  if (synchronous !== 'normal' && synchronous !== 'full') throw new ConfigError(`STRATA_SYNC must be "normal" or "full", got "${synchronous}"`);
  return {
    host,
    port,
    dataDir,
    projects,
    publicUrl: (values.STRATA_PUBLIC_URL ?? `http://localhost:${port}`).replace(/\/+$/, ''),
    devClientSecret: values.STRATA_DEV_CLIENT_SECRET || undefined,
    bodyLimit: integer('STRATA_BODY_LIMIT', values.STRATA_BODY_LIMIT ?? String(20 * 1024 * 1024), 1024, 1024 * 1024 * 1024),
    logLevel: values.STRATA_LOG_LEVEL ?? 'warn',
    synchronous,
  };
}
