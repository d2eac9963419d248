/**
 * Stream templates: a stream is created from one, and keeps a copy of its settings (a later change to the
 * template leaves existing streams as they are). A template says whether the stream's records can change
 * (`Mutable`) or not (`Immutable`), how long records are kept (`dataDeletedAfter`, immutable streams only),
 * how many records and bytes the stream may hold, and how long a span of `lastUpdatedTime` one filter or
 * aggregate over an immutable stream may cover.
 *
 * The names are those the reference's clients and guides create streams from; the reference does not publish
 * the figures behind them, so the figures here are Strata's. `STRATA_STREAM_TEMPLATES` adds templates or
 * replaces these (settings.ts).
 */
import { badRequest } from '../../http/errors.js';

export type StreamType = 'Immutable' | 'Mutable';

export interface StreamTemplate {
  type: StreamType;
  /** ISO 8601 durations. */
  dataDeletedAfter?: string;
  retainedAfterSoftDelete: string;
  maxFilteringInterval?: string;
  maxRecordsTotal: number;
  maxGigaBytesTotal: number;
}

export const BUILT_IN_TEMPLATES: Readonly<Record<string, StreamTemplate>> = {
  ImmutableTestStream: {
    type: 'Immutable',
    dataDeletedAfter: 'P7D',
    retainedAfterSoftDelete: 'P1D',
    maxFilteringInterval: 'P7D',
    maxRecordsTotal: 5_000_000,
    maxGigaBytesTotal: 5,
  },
  ImmutableDataStaging: {
    type: 'Immutable',
    dataDeletedAfter: 'P7D',
    retainedAfterSoftDelete: 'P7D',
    maxFilteringInterval: 'P7D',
    maxRecordsTotal: 1_000_000_000,
    maxGigaBytesTotal: 500,
  },
  ImmutableNormalizedData: {
    type: 'Immutable',
    dataDeletedAfter: 'P1Y',
    retainedAfterSoftDelete: 'P42D',
    maxFilteringInterval: 'P31D',
    maxRecordsTotal: 1_000_000_000,
    maxGigaBytesTotal: 500,
  },
  ImmutableArchive: {
    type: 'Immutable',
    retainedAfterSoftDelete: 'P42D',
    maxFilteringInterval: 'P1Y',
    maxRecordsTotal: 10_000_000_000,
    maxGigaBytesTotal: 5000,
  },
  MutableTestStream: {
    type: 'Mutable',
    retainedAfterSoftDelete: 'P1D',
    maxRecordsTotal: 1_000_000,
    maxGigaBytesTotal: 1,
  },
  BasicLiveData: {
    type: 'Mutable',
    retainedAfterSoftDelete: 'P7D',
    maxRecordsTotal: 5_000_000,
    maxGigaBytesTotal: 10,
  },
};

const DURATION = /^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/;
const DAY = 86_400_000;
/** Milliseconds per unit of DURATION's groups: a year is 365 days and a month 30 in lengths of time here. */
const UNITS = [365 * DAY, 30 * DAY, 7 * DAY, DAY, 3_600_000, 60_000, 1000];

/** An ISO 8601 duration (`P7D`, `P1Y`, `PT12H`) in milliseconds, or undefined when the text is not one. */
export function isoDurationMs(text: string): number | undefined {
  const m = DURATION.exec(text);
  if (!m || text === 'P' || text.endsWith('T')) return undefined;
  return UNITS.reduce((sum, unit, i) => sum + Number(m[i + 1] ?? 0) * unit, 0);
}

/** The template of a create request; a 400 naming the templates there are. */
export function templateNamed(templates: Readonly<Record<string, StreamTemplate>>, name: string, path: string): StreamTemplate {
  const t = Object.hasOwn(templates, name) ? templates[name] : undefined;
  if (!t) throw badRequest(`${path}: there is no stream template ${JSON.stringify(name)}; the templates are ${Object.keys(templates).sort().join(', ')}`);
  return t;
}
