/** A table of items, a page at a time, following the API's cursors (Back returns to the pages seen). */
import type { Page } from './api';
import { errorBox, h, replace, show } from './dom';

export interface Column<T> {
  title: string;
  value: (item: T) => unknown;
}

export interface ListOptions<T> {
  columns: Column<T>[];
  fetch: (cursor: string | undefined) => Promise<Page<T>>;
  /** Clicking a row. */
  open?: (item: T) => void;
  /** Extra cells at the start of a row (a checkbox). */
  lead?: (item: T) => Node;
}

export function pagedTable<T>(options: ListOptions<T>): HTMLElement {
  const root = h('div', { class: 'paged' });
  const cursors: (string | undefined)[] = [undefined];
  async function load(): Promise<void> {
    replace(root, h('p', { class: 'muted' }, 'Loading…'));
    let page: Page<T>;
    try {
      page = await options.fetch(cursors[cursors.length - 1]);
    } catch (error) {
      replace(root, errorBox(error));
      return;
    }
    const head = h('tr', {}, options.lead ? h('th', {}) : null, options.columns.map((c) => h('th', {}, c.title)));
    const rows = page.items.map((item) =>
      h(
        'tr',
        { class: options.open ? 'clickable' : undefined, onclick: options.open ? () => options.open!(item) : undefined },
        options.lead ? h('td', { onclick: (e: Event) => e.stopPropagation() }, options.lead(item)) : null,
        options.columns.map((c) => h('td', {}, show(c.value(item)))),
      ),
    );
    const pager = h(
      'div',
      { class: 'pager' },
      h('button', { disabled: cursors.length === 1, onclick: () => (cursors.pop(), load()) }, '← Back'),
      h('span', { class: 'muted' }, ` page ${cursors.length} · ${page.items.length} items `),
      h('button', { disabled: !page.nextCursor, 'data-testid': 'next-page', onclick: () => (cursors.push(page.nextCursor!), load()) }, 'Next →'),
    );
    replace(root, page.items.length ? h('table', {}, h('thead', {}, head), h('tbody', {}, rows)) : h('p', { class: 'muted' }, 'Nothing here.'), pager);
  }
  void load();
  return root;
}
