/** The data browsers: one view per kind of resource, each a paged table or tree over the public API. */
import { projectCall, type Page } from './api';
import { errorBox, formatTime, h, replace, show } from './dom';
import { pagedTable } from './list';

type Item = Record<string, any>;
export type Go = (hash: string) => void;

const LIMIT = 25;

function parseTime(value: string): number | undefined {
  if (!value) return undefined;
  const ms = Date.parse(value.includes('T') || value.length <= 10 ? value : value.replace(' ', 'T'));
  return Number.isNaN(ms) ? undefined : ms;
}

function field(label: string, name: string, attrs: Record<string, unknown> = {}): HTMLElement {
  return h('label', {}, label, h('input', { name, ...attrs }));
}

export function eventsView(project: string): HTMLElement {
  const results = h('div', {});
  const form = h(
    'form',
    { class: 'filters', 'aria-label': 'Event filters' },
    field('Type', 'type', { placeholder: 'alarm' }),
    field('From', 'from', { placeholder: '2024-01-01' }),
    field('To', 'to', { placeholder: '2024-12-31 23:59' }),
    field('Metadata key', 'metaKey'),
    field('Metadata value', 'metaValue'),
    field('Search', 'search', { placeholder: 'words in the description' }),
    h('button', { type: 'submit' }, 'Filter'),
  );
  function run(): void {
    const data = new FormData(form);
    const text = (k: string) => String(data.get(k) ?? '').trim();
    const filter: Item = {};
    if (text('type')) filter.type = text('type');
    const from = parseTime(text('from'));
    const to = parseTime(text('to'));
    if (from !== undefined || to !== undefined) filter.startTime = { ...(from !== undefined ? { min: from } : {}), ...(to !== undefined ? { max: to } : {}) };
    if (text('metaKey')) filter.metadata = { [text('metaKey')]: text('metaValue') };
    const search = text('search');
    replace(
      results,
      pagedTable<Item>({
        columns: [
          { title: 'id', value: (e) => e.id },
          { title: 'externalId', value: (e) => e.externalId },
          { title: 'type', value: (e) => e.type },
          { title: 'subtype', value: (e) => e.subtype },
          { title: 'start', value: (e) => formatTime(e.startTime) },
          { title: 'end', value: (e) => formatTime(e.endTime) },
          { title: 'description', value: (e) => e.description },
          { title: 'metadata', value: (e) => e.metadata },
        ],
        // Search ranks by relevance and has no cursor: one page of the best matches.
        fetch: (cursor) =>
          search ? projectCall<Page<Item>>(project, '/events/search', { filter, search: { description: search }, limit: 100 }) : projectCall(project, '/events/list', { filter, limit: LIMIT, cursor }),
      }),
    );
  }
  form.addEventListener('submit', (e) => (e.preventDefault(), run()));
  run();
  return h('section', {}, h('h2', {}, 'Events'), form, results);
}

function assetNode(project: string, asset: Item): HTMLElement {
  const children = h('ul', { class: 'tree' });
  let open = false;
  const toggle = h('button', { class: 'twisty', 'aria-label': `Expand ${asset.name}` }, '▸');
  toggle.addEventListener('click', async () => {
    open = !open;
    toggle.textContent = open ? '▾' : '▸';
    if (!open) return replace(children);
    await loadChildren(project, children, { parentIds: [asset.id] });
  });
  return h('li', {}, toggle, ' ', h('b', {}, asset.name), h('span', { class: 'muted' }, ` ${asset.externalId ?? ''} `, asset.description ?? ''), children);
}

async function loadChildren(project: string, into: HTMLElement, filter: Item, cursor?: string): Promise<void> {
  if (!cursor) replace(into, h('li', { class: 'muted' }, 'Loading…'));
  try {
    const page = await projectCall<Page<Item>>(project, '/assets/list', { filter, limit: 100, cursor });
    if (!cursor) replace(into);
    into.append(...page.items.map((a) => assetNode(project, a)));
    if (!page.items.length && !cursor) into.append(h('li', { class: 'muted' }, 'No assets.'));
    if (page.nextCursor) {
      const more: HTMLElement = h('li', {}, h('button', { onclick: () => (more.remove(), loadChildren(project, into, filter, page.nextCursor!)) }, 'More…'));
      into.append(more);
    }
  } catch (error) {
    replace(into, h('li', {}, errorBox(error)));
  }
}

export function assetsView(project: string): HTMLElement {
  const roots = h('ul', { class: 'tree' });
  void loadChildren(project, roots, { root: true });
  return h('section', {}, h('h2', {}, 'Assets'), roots);
}

export function timeSeriesView(project: string, go: Go): HTMLElement {
  const chosen = new Set<number>();
  const plot = h('button', { disabled: true, onclick: () => go(`/p/${project}/plot/${[...chosen].join(',')}`) }, 'Plot selected');
  const table = pagedTable<Item>({
    columns: [
      { title: 'id', value: (t) => t.id },
      { title: 'externalId', value: (t) => t.externalId },
      { title: 'name', value: (t) => t.name },
      { title: 'unit', value: (t) => t.unitExternalId ?? t.unit },
      { title: 'step', value: (t) => (t.isStep ? 'yes' : '') },
      { title: 'string', value: (t) => (t.isString ? 'yes' : '') },
      { title: 'description', value: (t) => t.description },
    ],
    fetch: (cursor) => projectCall(project, '/timeseries/list', { limit: LIMIT, cursor }),
    open: (t) => !t.isString && go(`/p/${project}/plot/${t.id}`),
    lead: (t) =>
      h('input', {
        type: 'checkbox',
        disabled: t.isString,
        'aria-label': `Select ${t.externalId ?? t.id}`,
        onchange: (e: Event) => {
          if ((e.target as HTMLInputElement).checked) chosen.add(t.id);
          else chosen.delete(t.id);
          plot.disabled = chosen.size === 0;
        },
      }),
  });
  return h('section', {}, h('h2', {}, 'Time series'), h('p', {}, plot, h('span', { class: 'muted' }, ' or click a row to plot it')), table);
}

export function dataSetsView(project: string): HTMLElement {
  const table = pagedTable<Item>({
    columns: [
      { title: 'id', value: (d) => d.id },
      { title: 'externalId', value: (d) => d.externalId },
      { title: 'name', value: (d) => d.name },
      { title: 'write protected', value: (d) => (d.writeProtected ? 'yes' : '') },
      { title: 'description', value: (d) => d.description },
      { title: 'metadata', value: (d) => d.metadata },
    ],
    fetch: (cursor) => projectCall(project, '/datasets/list', { limit: LIMIT, cursor }),
  });
  return h('section', {}, h('h2', {}, 'Data sets'), table);
}

/** Text files show their first 64 KiB. */
const PREVIEW_BYTES = 65536;

async function preview(project: string, file: Item, into: HTMLElement): Promise<void> {
  replace(into, h('p', { class: 'muted' }, 'Loading…'));
  try {
    const link = await projectCall<Page<Item>>(project, '/files/downloadlink', { items: [{ id: file.id }] });
    const url = link.items[0].downloadUrl as string;
    const type = String(file.mimeType ?? '');
    const title = h('h3', {}, file.name);
    if (type.startsWith('image/')) return replace(into, title, h('img', { src: url, alt: file.name, class: 'preview' }));
    if (type.startsWith('text/') || /json|xml|csv|yaml/.test(type) || /\.(txt|md|csv|json|log|ya?ml|xml)$/i.test(file.name)) {
      const res = await fetch(url, { credentials: 'omit', headers: { range: `bytes=0-${PREVIEW_BYTES - 1}` } });
      return replace(into, title, h('pre', { class: 'preview' }, await res.text()));
    }
    replace(into, title, h('p', {}, 'No preview for ', type || 'this type', '. ', h('a', { href: url }, 'Download')));
  } catch (error) {
    replace(into, errorBox(error));
  }
}

export function filesView(project: string): HTMLElement {
  const shown = h('div', { class: 'detail' });
  const table = pagedTable<Item>({
    columns: [
      { title: 'id', value: (f) => f.id },
      { title: 'name', value: (f) => f.name },
      { title: 'mimeType', value: (f) => f.mimeType },
      { title: 'uploaded', value: (f) => (f.uploaded ? 'yes' : 'no') },
      { title: 'directory', value: (f) => f.directory },
    ],
    fetch: (cursor) => projectCall(project, '/files/list', { limit: LIMIT, cursor }),
    open: (f) => void preview(project, f, shown),
  });
  return h('section', {}, h('h2', {}, 'Files'), table, shown);
}

async function sequenceRows(project: string, seq: Item, into: HTMLElement): Promise<void> {
  try {
    const data = await projectCall<Item>(project, '/sequences/data/list', { id: seq.id, limit: 100 });
    const columns = (data.columns as Item[]).map((c) => c.externalId as string);
    replace(
      into,
      h('h3', {}, seq.name ?? seq.externalId ?? seq.id, ' (first 100 rows)'),
      h('table', {}, h('thead', {}, h('tr', {}, h('th', {}, 'row'), columns.map((c) => h('th', {}, c)))), h('tbody', {}, (data.rows as Item[]).map((r) => h('tr', {}, h('td', {}, r.rowNumber), (r.values as unknown[]).map((v) => h('td', {}, show(v))))))),
    );
  } catch (error) {
    replace(into, errorBox(error));
  }
}

export function sequencesView(project: string): HTMLElement {
  const shown = h('div', { class: 'detail' });
  const table = pagedTable<Item>({
    columns: [
      { title: 'id', value: (s) => s.id },
      { title: 'externalId', value: (s) => s.externalId },
      { title: 'name', value: (s) => s.name },
      { title: 'columns', value: (s) => (s.columns as Item[]).map((c) => c.externalId).join(', ') },
    ],
    fetch: (cursor) => projectCall(project, '/sequences/list', { limit: LIMIT, cursor }),
    open: (s) => void sequenceRows(project, s, shown),
  });
  return h('section', {}, h('h2', {}, 'Sequences'), table, shown);
}

export function streamsView(project: string, go: Go): HTMLElement {
  const table = pagedTable<Item>({
    columns: [
      { title: 'externalId', value: (s) => s.externalId },
      { title: 'template', value: (s) => s.settings?.template?.name ?? s.type },
      { title: 'created', value: (s) => formatTime(s.createdTime) },
    ],
    fetch: () => projectCall(project, '/streams'),
    open: (s) => go(`/p/${project}/streams/${encodeURIComponent(s.externalId)}`),
  });
  return h('section', {}, h('h2', {}, 'Streams'), table);
}

export function recordsView(project: string, stream: string): HTMLElement {
  // The records changed in the last 30 days (immutable streams need a time range), newest last, a page at a time.
  const table = pagedTable<Item>({
    columns: [
      { title: 'space', value: (r) => r.space },
      { title: 'externalId', value: (r) => r.externalId },
      { title: 'last updated', value: (r) => formatTime(r.lastUpdatedTime) },
      { title: 'properties', value: (r) => r.properties },
    ],
    fetch: (cursor) =>
      projectCall<Item>(project, `/streams/${encodeURIComponent(stream)}/records/sync`, { limit: LIMIT, ...(cursor ? { cursor } : { initializeCursor: '30d-ago' }) }).then((page) => ({
        items: page.items,
        nextCursor: page.hasNext ? page.nextCursor : undefined,
      })),
  });
  return h('section', {}, h('h2', {}, `Records of ${stream}`), table);
}

export function modelsView(project: string, go: Go): HTMLElement {
  const models = pagedTable<Item>({
    columns: [
      { title: 'space', value: (m) => m.space },
      { title: 'externalId', value: (m) => m.externalId },
      { title: 'version', value: (m) => m.version },
      { title: 'name', value: (m) => m.name },
      { title: 'views', value: (m) => (m.views as Item[] | undefined)?.map((v) => v.externalId).join(', ') },
    ],
    fetch: (cursor) => projectCall(project, `/models/datamodels?limit=${LIMIT}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`),
  });
  const views = pagedTable<Item>({
    columns: [
      { title: 'space', value: (v) => v.space },
      { title: 'externalId', value: (v) => v.externalId },
      { title: 'version', value: (v) => v.version },
      { title: 'used for', value: (v) => v.usedFor },
      { title: 'properties', value: (v) => Object.keys(v.properties ?? {}).join(', ') },
    ],
    fetch: (cursor) => projectCall(project, `/models/views?limit=${LIMIT}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`),
    open: (v) => go(`/p/${project}/instances/${encodeURIComponent(`${v.space}:${v.externalId}:${v.version}`)}`),
  });
  return h('section', {}, h('h2', {}, 'Data models'), models, h('h2', {}, 'Views'), h('p', { class: 'muted' }, 'Click a view to list its instances.'), views);
}

function viewRef(spec: string | undefined): Item | undefined {
  if (!spec) return undefined;
  const [space, externalId, version] = spec.split(':');
  return { type: 'view', space, externalId, version };
}

export function instancesView(project: string, go: Go, view?: string): HTMLElement {
  const source = viewRef(view);
  const table = pagedTable<Item>({
    columns: [
      { title: 'type', value: (i) => i.instanceType },
      { title: 'space', value: (i) => i.space },
      { title: 'externalId', value: (i) => i.externalId },
      { title: 'properties', value: (i) => i.properties },
    ],
    fetch: (cursor) =>
      projectCall(project, '/models/instances/list', {
        instanceType: source ? undefined : 'node',
        limit: LIMIT,
        cursor,
        ...(source ? { sources: [{ source }], filter: { hasData: [source] } } : {}),
      }),
    open: (i) => go(`/p/${project}/node/${encodeURIComponent(i.space)}/${encodeURIComponent(i.externalId)}`),
  });
  return h('section', {}, h('h2', {}, source ? `Instances of ${source.space}:${source.externalId}` : 'Nodes'), table);
}
