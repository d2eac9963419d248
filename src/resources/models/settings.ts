/**
 * The data modeling section of the configuration: how long a sync cursor lives, and what a project may hold
 * over the reference's defaults (limits.ts).
 */
import { ConfigError, count, integer, type ConfigSection } from '../../config.js';
import type { Services } from '../../http/services.js';
import { DM_LIMITS, PROJECT_LIMIT_NAMES } from './limits.js';

export interface ModelsSettings {
  /** Age at which a sync cursor expires, in milliseconds. */
  syncCursorMaxAgeMs: number;
  /** What a project may hold, by name (`instances`, `spaces`, ...), over the defaults. */
  limits?: Readonly<Record<string, number>>;
}

const LIMITS_EXAMPLE = '{"instances": 100000}';

export const MODELS_SETTINGS: ConfigSection<ModelsSettings> = {
  name: 'data modeling',
  settings: [
    {
      flag: '--sync-cursor-max-age',
      env: 'STRATA_SYNC_CURSOR_MAX_AGE_MS',
      default: String(DM_LIMITS.syncCursorMaxAgeMs),
      meaning: 'age at which a data modeling sync cursor expires, in ms',
    },
    { flag: '--models-limits', env: 'STRATA_MODELS_LIMITS', shown: "the reference's", meaning: `what a project may hold in data modeling, as JSON such as ${LIMITS_EXAMPLE}` },
  ],
  load: (text, name) => ({
    syncCursorMaxAgeMs: integer(name('STRATA_SYNC_CURSOR_MAX_AGE_MS'), text('STRATA_SYNC_CURSOR_MAX_AGE_MS')!, 1000, 365 * 86_400_000),
    limits: projectLimitsSetting(text('STRATA_MODELS_LIMITS'), name('STRATA_MODELS_LIMITS')),
  }),
};

/** The data modeling settings of the request's app. */
export const modelsSettings = (services: Pick<Services, 'settings'>): ModelsSettings => services.settings.of(MODELS_SETTINGS);

/** STRATA_MODELS_LIMITS: a JSON object of project limits to override. */
function projectLimitsSetting(raw: string | undefined, where: string): Record<string, number> | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    throw new ConfigError(`${where} is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`${where} must be a JSON object such as ${LIMITS_EXAMPLE}; names: ${PROJECT_LIMIT_NAMES.join(', ')}`);
  }
  const out: Record<string, number> = {};
  for (const [name, value] of Object.entries(parsed)) {
    if (!(PROJECT_LIMIT_NAMES as readonly string[]).includes(name)) throw new ConfigError(`${where}: unknown limit "${name}"; names: ${PROJECT_LIMIT_NAMES.join(', ')}`);
    out[name] = count(`${where}.${name}`, value as number, 'items', value);
  }
  return out;
}
