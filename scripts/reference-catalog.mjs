// Writes catalog/reference/operations.tsv, the list of the reference's operations (area, tag, method, path,
// operationId) that the coverage table (docs/coverage.md) and the 501 for operations Strata lacks are built
// from, so that Strata needs no copy of the reference document itself.
//
//   node scripts/reference-catalog.mjs [path/to/openapi.json]
//
// The document defaults to $STRATA_REFERENCE, else ../shared/reference/openapi.json beside the repository.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const source = resolve(process.argv[2] ?? process.env.STRATA_REFERENCE ?? join(root, '..', 'shared', 'reference', 'openapi.json'));
const target = join(root, 'catalog', 'reference', 'operations.tsv');

/**
 * Areas as a user looks for them, in the order the coverage table shows them, each with the reference's
 * tags it gathers. A tag missing here becomes an area of its own (and the script says so).
 */
const AREAS = [
  ['Events', ['Events']],
  ['Assets', ['Assets']],
  ['Time series', ['Time series']],
  ['Data points', ['Synthetic Time Series']],
  ['Data point subscriptions', ['Data point subscriptions']],
  ['Files', ['Files']],
  ['Sequences', ['Sequences']],
  ['Data sets', ['Data sets']],
  ['Labels', ['Labels']],
  ['Relationships', ['Relationships']],
  ['Annotations', ['Annotations']],
  ['Units', ['Units', 'Unit Systems']],
  ['Data modeling', ['Spaces', 'Containers', 'Views', 'Data models', 'Instances', 'Statistics']],
  ['Streams and records', ['Streams', 'Records']],
  ['Raw', ['Raw']],
  ['Geospatial', ['Geospatial']],
  ['Seismic', ['Seismic']],
  ['3D', ['3D Models', '3D Model Revisions', '3D Files', '3D Asset Mapping', '3D Jobs']],
  ['Documents', ['Documents', 'Document preview', 'Document parsing', 'Document AI']],
  ['Entity matching', ['Entity matching']],
  ['Engineering diagrams and vision', ['Engineering diagrams', 'Vision']],
  ['Diagram parsing', ['Diagrams', 'Libraries', 'Symbols', 'Geometries', 'Entities', 'Connections', 'Parsing', 'SVG Data']],
  ['Extraction pipelines', ['Extraction Pipelines', 'Extraction Pipelines Runs', 'Extraction Pipelines Config']],
  ['Extractors and integrations', ['Extractors', 'Integrations']],
  ['Hosted extractors', ['Sources', 'Jobs', 'Destinations', 'Mappings', 'Previews']],
  ['Transformations', ['Transformations', 'Transformation Jobs', 'Transformation Schedules', 'Transformation Notifications', 'Query', 'Schema']],
  ['Functions', ['Functions', 'Function calls', 'Function schedules']],
  ['Workflows', ['Workflows', 'Workflow versions', 'Workflow executions', 'Workflow triggers', 'Tasks']],
  ['Simulators', ['Simulators', 'Simulator Integrations', 'Simulator Models', 'Simulator Routines', 'Simulation Runs', 'Simulator Logs']],
  ['Signals', ['Signals']],
  ['PostgreSQL gateway', ['Postgres Gateway Users', 'Postgres Gateway Tables']],
  ['SAP writeback', ['SAP Instances', 'SAP Endpoints', 'Schema Mappings', 'Writeback Requests']],
  ['Identity and access', ['Token', 'Groups', 'Security categories', 'Sessions', 'User profiles', 'Principals']],
  ['Organizations and projects', ['Organizations', 'Projects']],
];
/** Paths whose area is not their tag's: the reference files data points under the tag of time series. */
const PATH_AREAS = [['/timeseries/data', 'Data points']];

const PROJECT_BASE = '/api/v1/projects/{project}';
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

if (!existsSync(source)) {
  console.error(`No reference document at ${source}; give its path as the argument (or STRATA_REFERENCE). ${target} is unchanged.`);
  process.exit(1);
}
const doc = JSON.parse(readFileSync(source, 'utf8'));
const areaOfTag = new Map(AREAS.flatMap(([area, tags]) => tags.map((tag) => [tag, area])));
const areaOrder = AREAS.map(([area]) => area);
const tagOrder = AREAS.flatMap(([, tags]) => tags);

/** The path of a server URL (`https://host/api/v1` -> `/api/v1`), its variables left as they are. */
function serverPath(servers) {
  const url = servers?.[0]?.url ?? '';
  return url.replace(/^[a-z]+:\/\/[^/]*/i, '').replace(/\/$/, '');
}

/**
 * How Strata names the operation: relative to the project's address when it is under it, else the whole
 * path (`/api/v1/token/inspect`). A path written whole under the project's server is read as the whole path.
 */
function strataPath(base, path) {
  const whole = path.startsWith(`${PROJECT_BASE}/`) ? path : `${base}${path}`;
  return whole.startsWith(`${PROJECT_BASE}/`) ? whole.slice(PROJECT_BASE.length) : whole;
}

const rows = [];
const unmapped = new Set();
for (const [path, item] of Object.entries(doc.paths)) {
  for (const method of METHODS) {
    const op = item[method];
    if (!op) continue;
    const base = serverPath(op.servers ?? item.servers ?? doc.servers);
    const name = strataPath(base, path);
    const tag = op.tags?.[0] ?? '';
    const byPath = PATH_AREAS.find(([prefix]) => name === prefix || name.startsWith(`${prefix}/`));
    if (!byPath && !areaOfTag.has(tag)) unmapped.add(tag);
    const area = byPath?.[1] ?? areaOfTag.get(tag) ?? tag;
    rows.push({ area, tag, method: method.toUpperCase(), path: name, operationId: op.operationId ?? '' });
  }
}
for (const tag of unmapped) console.error(`The tag ${JSON.stringify(tag)} belongs to no area in scripts/reference-catalog.mjs: it is listed as an area of its own`);

const rank = (list, value) => (list.includes(value) ? list.indexOf(value) : list.length);
rows.sort(
  (a, b) =>
    rank(areaOrder, a.area) - rank(areaOrder, b.area) ||
    a.area.localeCompare(b.area) ||
    rank(tagOrder, a.tag) - rank(tagOrder, b.tag) ||
    a.path.localeCompare(b.path) ||
    METHODS.indexOf(a.method.toLowerCase()) - METHODS.indexOf(b.method.toLowerCase()) ||
    a.operationId.localeCompare(b.operationId),
);
const header = [
  `# The ${rows.length} operations of the reference document (OpenAPI ${doc.openapi}), one per line,`,
  '# tab-separated: area, tag, method, path, operationId. A path under the project address is written relative to',
  '# /api/v1/projects/{project}; others whole. Generated by scripts/reference-catalog.mjs: do not edit by hand.',
];
const lines = rows.map((r) => [r.area, r.tag, r.method, r.path, r.operationId].join('\t'));
writeFileSync(target, `${[...header, ...lines].join('\n')}\n`);
console.log(`${target}: ${rows.length} operations in ${new Set(rows.map((r) => r.area)).size} areas`);
