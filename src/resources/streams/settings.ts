/**
 * The streams section of the configuration: the stream templates (the built-in ones, with those of
 * `STRATA_STREAM_TEMPLATES` added or replacing them), and how long the tombstone of a deleted record stays in
 * a mutable stream's sync feed, which is also the age at which a sync cursor expires.
 */
import { ConfigError, integer, type ConfigSection } from '../../config.js';
import type { Services } from '../../http/services.js';
import { BUILT_IN_TEMPLATES, isoDurationMs, type StreamTemplate } from './templates.js';
import { isObject } from '../../http/validation.js';

export interface StreamsSettings {
  templates: Readonly<Record<string, StreamTemplate>>;
  tombstoneRetentionMs: number;
}

const DAY = 86_400_000;
const EXAMPLE = '{"SmallLiveData": {"type": "Mutable", "maxRecordsTotal": 1000, "maxGigaBytesTotal": 1}}';

export const STREAMS_SETTINGS: ConfigSection<StreamsSettings> = {
  name: 'streams and records',
  settings: [
    {
      flag: '--stream-templates',
      env: 'STRATA_STREAM_TEMPLATES',
      shown: 'the built-in templates',
      meaning: `stream templates to add or replace, as JSON such as ${EXAMPLE} (also dataDeletedAfter, retainedAfterSoftDelete and maxFilteringInterval, as ISO 8601 durations)`,
    },
    {
      flag: '--record-tombstone-retention',
      env: 'STRATA_RECORD_TOMBSTONE_RETENTION_MS',
      default: String(3 * DAY),
      meaning: "how long a deleted record's tombstone stays in its stream's sync feed, and the age at which a records sync cursor expires, in ms",
    },
  ],
  load: (text, name) => ({
    templates: { ...BUILT_IN_TEMPLATES, ...templatesSetting(text('STRATA_STREAM_TEMPLATES'), name('STRATA_STREAM_TEMPLATES')) },
    tombstoneRetentionMs: integer(name('STRATA_RECORD_TOMBSTONE_RETENTION_MS'), text('STRATA_RECORD_TOMBSTONE_RETENTION_MS')!, 1000, 365 * DAY),
  }),
};

export const streamsSettings = (services: Pick<Services, 'settings'>): StreamsSettings => services.settings.of(STREAMS_SETTINGS);

const FIELDS = ['type', 'dataDeletedAfter', 'retainedAfterSoftDelete', 'maxFilteringInterval', 'maxRecordsTotal', 'maxGigaBytesTotal'];

function templatesSetting(raw: string | undefined, where: string): Record<string, StreamTemplate> {
  if (raw === undefined || raw.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    throw new ConfigError(`${where} is not valid JSON: ${(err as Error).message}`);
  }
  if (!isObject(parsed)) throw new ConfigError(`${where} must be a JSON object of templates by name, such as ${EXAMPLE}`);
  const out: Record<string, StreamTemplate> = {};
  for (const [name, t] of Object.entries(parsed)) {
    const at = `${where}.${name}`;
    if (!isObject(t)) throw new ConfigError(`${at} must be an object such as ${JSON.stringify(BUILT_IN_TEMPLATES.BasicLiveData)}`);
    const unknown = Object.keys(t).find((k) => !FIELDS.includes(k));
    if (unknown !== undefined) throw new ConfigError(`${at}: unknown field "${unknown}"; fields: ${FIELDS.join(', ')}`);
    if (t.type !== 'Mutable' && t.type !== 'Immutable') throw new ConfigError(`${at}.type must be "Mutable" or "Immutable"`);
    for (const key of ['maxRecordsTotal', 'maxGigaBytesTotal']) {
      if (typeof t[key] !== 'number' || !(t[key] > 0)) throw new ConfigError(`${at}.${key} must be a positive number`);
    }
    for (const key of ['dataDeletedAfter', 'retainedAfterSoftDelete', 'maxFilteringInterval']) {
      if (t[key] !== undefined && (typeof t[key] !== 'string' || !isoDurationMs(t[key]))) throw new ConfigError(`${at}.${key} must be an ISO 8601 duration such as "P7D"`);
    }
    if (t.type === 'Mutable' && (t.dataDeletedAfter !== undefined || t.maxFilteringInterval !== undefined)) {
      throw new ConfigError(`${at}: dataDeletedAfter and maxFilteringInterval apply to immutable streams only`);
    }
    out[name] = { retainedAfterSoftDelete: 'P1D', ...(t as Omit<StreamTemplate, 'retainedAfterSoftDelete'>) };
  }
  return out;
}
