/** The project's recent requests (GET /console/requests): who called what, how it went, and why it was refused. */
import { projectCall, type Page } from './api';
import { errorBox, formatTime, h, replace } from './dom';

type Entry = Record<string, any>;

export function requestsView(project: string): HTMLElement {
  const table = h('div', {});
  const refusedOnly = h('input', { type: 'checkbox', name: 'refused' });
  const filter = h('input', { name: 'operation', placeholder: 'operation contains…' });
  let entries: Entry[] = [];
  function render(): void {
    const words = filter.value.trim().toLowerCase();
    const shown = entries.filter((e) => (!refusedOnly.checked || e.status >= 400) && (!words || String(e.operation).toLowerCase().includes(words)));
    replace(
      table,
      h(
        'table',
        { class: 'requests' },
        h('thead', {}, h('tr', {}, ['time', 'principal', 'operation', 'status', 'ms', 'SDK', 'app', 'version', 'error'].map((t) => h('th', {}, t)))),
        h(
          'tbody',
          {},
          shown.map((e) =>
            h(
              'tr',
              { class: e.status >= 400 ? 'refused' : undefined },
              h('td', {}, formatTime(e.time)),
              h('td', {}, e.principal ?? '—'),
              h('td', {}, e.operation),
              h('td', {}, e.status),
              h('td', {}, e.durationMs),
              h('td', {}, e.sdk ?? ''),
              h('td', {}, e.app ?? ''),
              h('td', {}, e.version ?? ''),
              h('td', { class: 'message' }, e.error ?? ''),
            ),
          ),
        ),
      ),
      shown.length ? null : h('p', { class: 'muted' }, 'No requests.'),
    );
  }
  async function load(): Promise<void> {
    try {
      entries = (await projectCall<Page<Entry>>(project, '/console/requests')).items;
      render();
    } catch (error) {
      replace(table, errorBox(error));
    }
  }
  refusedOnly.addEventListener('change', render);
  filter.addEventListener('input', render);
  void load();
  return h(
    'section',
    {},
    h('h2', {}, 'Recent requests'),
    h('p', { class: 'muted' }, 'Kept in the server’s memory, the latest 1000 per project; you see those whose operation your groups may use on the whole project.'),
    h('div', { class: 'filters' }, h('label', { class: 'inline' }, refusedOnly, ' refused only'), filter, h('button', { onclick: () => void load() }, 'Refresh')),
    table,
  );
}
