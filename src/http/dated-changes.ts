/**
 * The one table of behaviour that changed on a date. A request's version (`svc-version: YYYYMMDD`) selects,
 * for every key, the value in force on that date; handlers read it with `ctx.version.at(key)`. A later change
 * is one more row here: a new key, or a further row for an existing key (its `before` equal to the previous
 * row's `after`).
 *
 * Only changes of existing behaviour that touch what Strata serves are rows. An addition (an operation, a
 * field, an aggregate) is served at every version: the reference serves it so, and its clients rely on that
 * (the official Python SDK sends 20230101 and asks for the aggregates added on 2025-03-12).
 */

/**
 * The first version the API recognises: 2023-01-01, the first calendar version (the reference's own example
 * header is `cdf-version: 20230101-beta`), and the version the official Python SDK sends with every request
 * unless told otherwise.
 */
export const FIRST_VERSION = '20230101';

export const DATED_CHANGES = [
  {
    date: '20241011',
    key: 'orgProjectListing',
    change: "Listing an organization's projects: its admins only, names only, before; from this date every member of the organization, each project with its apiUrl",
    before: 'admins',
    after: 'members',
  },
  {
    date: '20250215',
    key: 'userProfilesApi',
    change: 'User profiles (/profiles): served as they are before; from this date deprecated in favour of the principals operations, each answer with a Deprecation header',
    before: 'current',
    after: 'deprecated',
  },
  {
    date: '20250926',
    key: 'stringDatapointMaxLength',
    change: 'Longest string data point: 255 characters before, 1023 bytes of UTF-8 from this date',
    before: { max: 255, unit: 'characters' },
    after: { max: 1023, unit: 'utf8Bytes' },
  },
  {
    date: '20260325',
    key: 'recordAggregateIdentifiers',
    change:
      'Identifiers of records aggregates: any text of 1 to 255 characters before; from this date without "[", "]", ">" or ".", ' +
      'not "_count" or "_bucket_count", and each unique within the request\'s aggregate tree',
    before: 'lenient',
    after: 'strict',
  },
  {
    date: '20260505',
    key: 'signalsChannel',
    change: 'Signals API (/processes/signals): an alpha API before; beta from this date (a -beta or -alpha version calls it)',
    before: 'alpha',
    after: 'beta',
  },
  {
    date: '20260505',
    key: 'seismicApi',
    change: 'Seismic API (/seismic): not served (501, as any operation Strata does not implement) before; removed from this date (410 saying so)',
    before: 'unimplemented',
    after: 'removed',
  },
  {
    date: '20260828',
    key: 'externalDataSourceCreate',
    change: 'Creating a transformations external data source whose externalId exists: replaces it before; a 409 that creates nothing from this date',
    before: 'upsert',
    after: 'createOnly',
  },
] as const;

type Row = (typeof DATED_CHANGES)[number];
export type DatedKey = Row['key'];
/** Every value a key takes across its rows. */
export type DatedValue<K extends DatedKey> = Extract<Row, { key: K }>['before'] | Extract<Row, { key: K }>['after'];
export type DatedValues = { readonly [K in DatedKey]: DatedValue<K> };

/** The keys whose rows deprecate operations (their value from the date on is `deprecated`). */
export type DeprecatingKey = { [K in DatedKey]: 'deprecated' extends DatedValue<K> ? K : never }[DatedKey];

/** The `Deprecation` header (RFC 9745: `@` and seconds since the epoch) of the row that deprecates with `key`. */
export function deprecationHeader(key: DeprecatingKey): string {
  const date = DATED_CHANGES.find((r) => r.key === key)!.date;
  return `@${Date.UTC(Number(date.slice(0, 4)), Number(date.slice(4, 6)) - 1, Number(date.slice(6))) / 1000}`;
}

/** The dates on which the API's behaviour changed, oldest first, starting with FIRST_VERSION. */
export const RELEASES: readonly string[] = [...new Set([FIRST_VERSION, ...DATED_CHANGES.map((r) => r.date)])].sort();

/** The value of every key on a release date. */
export function valuesAt(release: string): DatedValues {
  const rows = [...DATED_CHANGES].sort((a, b) => a.date.localeCompare(b.date));
  const values: Record<string, unknown> = {};
  for (const row of rows) {
    if (!(row.key in values)) values[row.key] = row.before;
    if (row.date <= release) values[row.key] = row.after;
  }
  return Object.freeze(values) as DatedValues;
}
