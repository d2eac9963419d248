/** One node of a data model: its properties, and its edges drawn as a small graph whose neighbours can be followed. */
import { projectCall, type Page } from './api';
import { errorBox, h, replace, show } from './dom';
import type { Go } from './views';

type Item = Record<string, any>;
const SVG = 'http://www.w3.org/2000/svg';

function svg(tag: string, attrs: Record<string, string | number>, text?: string): SVGElement {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

interface Neighbour {
  space: string;
  externalId: string;
  /** The edge's type, and whether it leaves this node. */
  label: string;
  outgoing: boolean;
}

function drawGraph(center: Item, neighbours: Neighbour[], open: (n: Neighbour) => void): SVGElement {
  const width = 640;
  const height = 360;
  const cx = width / 2;
  const cy = height / 2;
  const radius = 140;
  const root = svg('svg', { viewBox: `0 0 ${width} ${height}`, class: 'graph', role: 'img', 'aria-label': 'Edges of this node' });
  neighbours.forEach((n, i) => {
    const angle = (2 * Math.PI * i) / Math.max(neighbours.length, 1) - Math.PI / 2;
    const x = cx + radius * Math.cos(angle) * 1.6;
    const y = cy + radius * Math.sin(angle);
    root.append(svg('line', { x1: cx, y1: cy, x2: x, y2: y, class: n.outgoing ? 'edge out' : 'edge in' }));
    root.append(svg('text', { x: (cx + x) / 2, y: (cy + y) / 2 - 4, class: 'edge-label', 'text-anchor': 'middle' }, `${n.outgoing ? '→' : '←'} ${n.label}`));
    const g = svg('g', { class: 'neighbour', 'data-node': `${n.space}:${n.externalId}`, tabindex: 0, role: 'link' });
    g.append(svg('circle', { cx: x, cy: y, r: 10 }), svg('text', { x, y: y + 24, 'text-anchor': 'middle' }, n.externalId));
    g.addEventListener('click', () => open(n));
    g.addEventListener('keydown', (e) => (e as KeyboardEvent).key === 'Enter' && open(n));
    root.append(g);
  });
  root.append(svg('circle', { cx, cy, r: 14, class: 'center' }), svg('text', { x: cx, y: cy + 30, 'text-anchor': 'middle', class: 'center-label' }, center.externalId));
  return root;
}

async function edgesOf(project: string, space: string, externalId: string): Promise<Neighbour[]> {
  const ref = { space, externalId };
  const list = (end: 'startNode' | 'endNode') =>
    projectCall<Page<Item>>(project, '/models/instances/list', { instanceType: 'edge', limit: 100, filter: { equals: { property: ['edge', end], value: ref } } });
  const [out, inc] = await Promise.all([list('startNode'), list('endNode')]);
  return [
    ...out.items.map((e) => ({ ...e.endNode, label: e.type?.externalId ?? '', outgoing: true })),
    ...inc.items.map((e) => ({ ...e.startNode, label: e.type?.externalId ?? '', outgoing: false })),
  ];
}

export function nodeView(project: string, space: string, externalId: string, go: Go): HTMLElement {
  const body = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  void (async () => {
    try {
      const found = await projectCall<Page<Item>>(project, '/models/instances/byids', { items: [{ instanceType: 'node', space, externalId }] });
      const node = found.items[0];
      if (!node) return replace(body, errorBox(`No node ${space}:${externalId} (or it is outside your spaces)`));
      const neighbours = await edgesOf(project, space, externalId);
      const open = (n: Neighbour) => go(`/p/${project}/node/${encodeURIComponent(n.space)}/${encodeURIComponent(n.externalId)}`);
      const props = Object.entries((node.properties ?? {}) as Record<string, Record<string, Item>>).flatMap(([sp, views]) =>
        Object.entries(views).flatMap(([view, values]) => Object.entries(values).map(([k, v]) => h('tr', {}, h('td', {}, `${sp}/${view}`), h('td', {}, k), h('td', {}, show(v))))),
      );
      replace(
        body,
        h('p', {}, `space ${node.space} · version ${node.version}`),
        props.length ? h('table', {}, h('thead', {}, h('tr', {}, h('th', {}, 'view'), h('th', {}, 'property'), h('th', {}, 'value'))), h('tbody', {}, props)) : h('p', { class: 'muted' }, 'No properties.'),
        h('h3', {}, `Edges (${neighbours.length})`),
        neighbours.length ? drawGraph(node, neighbours, open) : h('p', { class: 'muted' }, 'No edges.'),
      );
    } catch (error) {
      replace(body, errorBox(error));
    }
  })();
  return h('section', { 'data-node': `${space}:${externalId}` }, h('h2', {}, `Node ${space}:${externalId}`), body);
}
