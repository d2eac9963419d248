/**
 * Time series plots with uPlot. Every fetch asks for what the plot's width can show: at most two raw points
 * per pixel (when the range holds fewer, they are drawn as they are), otherwise aggregates (average, with
 * min and max as a band) at the shortest granularity that gives at most one bucket per pixel. Zoom (drag a
 * range, or the wheel) and pan fetch again for the new range, so years of data and tens of millions of
 * points behind a series cost the same few thousand points per view.
 */
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { projectCall, type Page } from './api';
import { errorBox, formatTime, h, replace } from './dom';

type Item = Record<string, any>;

interface Series {
  id: number;
  label: string;
  isStep: boolean;
  unitExternalId?: string;
  unit?: string;
  targetUnit?: string;
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2'];
const STEPS: [string, number, number[]][] = [
  ['s', 1000, [1, 2, 5, 10, 15, 30]],
  ['m', 60_000, [1, 2, 5, 10, 15, 30]],
  ['h', 3_600_000, [1, 2, 3, 6, 12]],
  ['d', 86_400_000, [1, 2, 7, 14, 30, 61, 122, 365, 730, 1826, 3652, 36524]],
];
const MIN_TIME = -2208988800000; // 1900-01-01, the API's earliest timestamp
const MAX_TIME = 4102444800000; // 2100-01-01

/** The shortest granularity with at most one bucket per pixel over `span` milliseconds. */
export function granularityFor(span: number, pixels: number): string {
  const per = span / Math.max(pixels, 1);
  for (const [unit, ms, multiples] of STEPS) for (const n of multiples) if (n * ms >= per) return `${n}${unit}`;
  return '36524d';
}

let unitsCatalog: Promise<Item[]> | undefined;
function units(project: string): Promise<Item[]> {
  return (unitsCatalog ??= projectCall<Page<Item>>(project, '/units').then((p) => p.items));
}

interface Fetched {
  xs: number[];
  avg: (number | null)[];
  min: (number | null)[];
  max: (number | null)[];
  mode: string;
}

async function fetchSeries(project: string, s: Series, start: number, end: number, pixels: number): Promise<Fetched> {
  const rawLimit = Math.max(2 * pixels, 10);
  const item = { id: s.id, ...(s.targetUnit ? { targetUnit: s.targetUnit } : {}) };
  const raw = await projectCall<Page<Item>>(project, '/timeseries/data/list', { items: [{ ...item, limit: rawLimit }], start, end: end + 1 });
  const points = raw.items[0].datapoints as Item[];
  if (points.length < rawLimit) {
    return { xs: points.map((p) => p.timestamp), avg: points.map((p) => p.value), min: points.map(() => null), max: points.map(() => null), mode: 'raw' };
  }
  const granularity = granularityFor(end - start, pixels);
  const agg = await projectCall<Page<Item>>(project, '/timeseries/data/list', {
    items: [{ ...item, aggregates: ['average', 'min', 'max'], granularity, limit: 10000 }],
    start,
    end: end + 1,
  });
  const buckets = agg.items[0].datapoints as Item[];
  return {
    xs: buckets.map((b) => b.timestamp),
    avg: buckets.map((b) => b.average ?? null),
    min: buckets.map((b) => b.min ?? null),
    max: buckets.map((b) => b.max ?? null),
    mode: granularity,
  };
}

async function initialRange(project: string, series: Series[]): Promise<[number, number]> {
  const items = series.map((s) => ({ id: s.id }));
  const [first, last] = await Promise.all([
    projectCall<Page<Item>>(project, '/timeseries/data/list', { items: items.map((i) => ({ ...i, limit: 1 })), start: MIN_TIME, end: MAX_TIME }),
    projectCall<Page<Item>>(project, '/timeseries/data/latest', { items: items.map((i) => ({ ...i, before: MAX_TIME })) }),
  ]);
  const starts = first.items.flatMap((i) => (i.datapoints as Item[]).map((p) => p.timestamp as number));
  const ends = last.items.flatMap((i) => (i.datapoints as Item[]).map((p) => p.timestamp as number));
  if (!starts.length) return [Date.now() - 86_400_000, Date.now()];
  const start = Math.min(...starts);
  const end = Math.max(...ends, start + 1000);
  return [start, end];
}

export function plotView(project: string, ids: number[]): HTMLElement {
  const status = h('p', { class: 'muted plot-status' });
  const chartBox = h('div', { class: 'chart', 'data-testid': 'plot' });
  const controls = h('div', { class: 'plot-controls' });
  const section = h('section', {}, h('h2', {}, 'Plot'), controls, chartBox, status);
  let series: Series[] = [];
  let range: [number, number] = [0, 1];
  let fullRange: [number, number] = [0, 1];
  let chart: uPlot | undefined;
  let generation = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const width = () => Math.max(chartBox.clientWidth, 300);

  function scaleKey(s: Series): string {
    return s.targetUnit ?? s.unitExternalId ?? s.unit ?? 'y';
  }

  function build(): void {
    chart?.destroy();
    const keys = [...new Set(series.map(scaleKey))];
    const seriesOpts: uPlot.Series[] = [{}];
    const bands: uPlot.Band[] = [];
    series.forEach((s, i) => {
      const color = COLORS[i % COLORS.length];
      const scale = scaleKey(s);
      const unit = s.targetUnit ?? s.unitExternalId ?? s.unit;
      const paths = s.isStep ? uPlot.paths.stepped!({ align: 1 }) : undefined;
      const base = 1 + i * 3;
      seriesOpts.push(
        { label: `${s.label}${unit ? ` [${unit}]` : ''}`, stroke: color, width: 1.5, scale, spanGaps: false, paths, points: { show: false } },
        { label: `${s.label} min`, stroke: color + '55', width: 0.5, scale, paths, points: { show: false } },
        { label: `${s.label} max`, stroke: color + '55', width: 0.5, scale, paths, points: { show: false } },
      );
      bands.push({ series: [base + 2, base + 1], fill: color + '22' });
    });
    const axes: uPlot.Axis[] = [{}, ...keys.map((key, i) => ({ scale: key, side: i % 2 === 0 ? 3 : 1, label: key === 'y' ? '' : key, grid: { show: i === 0 } }))];
    // The x scale always shows the range asked for (answers' buckets start before it); every change of
    // range, from a drag, the wheel or a button, goes through setRange.
    const scales: uPlot.Scales = { x: { time: true, range: () => [range[0], range[1]] } };
    for (const key of keys) scales[key] = { auto: true };
    chart = new uPlot(
      {
        width: width(),
        height: 380,
        ms: 1,
        series: seriesOpts,
        bands,
        axes,
        scales,
        cursor: { drag: { x: true, y: false, setScale: false } },
        legend: { live: true },
        hooks: {
          setSelect: [
            (u) => {
              if (u.select.width < 3) return;
              const from = u.posToVal(u.select.left, 'x');
              const to = u.posToVal(u.select.left + u.select.width, 'x');
              u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
              setRange([Math.round(from), Math.round(to)]);
            },
          ],
        },
      },
      [[], ...series.flatMap(() => [[], [], []])] as unknown as uPlot.AlignedData,
      chartBox,
    );
    chart.over.addEventListener('wheel', (e) => {
      e.preventDefault();
      const at = chart!.posToVal(e.offsetX, 'x');
      zoom(e.deltaY > 0 ? 1.5 : 1 / 1.5, at);
    });
  }

  function zoom(factor: number, at = (range[0] + range[1]) / 2): void {
    const start = at - (at - range[0]) * factor;
    const end = at + (range[1] - at) * factor;
    if (end - start < 10) return;
    setRange([Math.round(start), Math.round(end)]);
  }

  function setRange(next: [number, number]): void {
    range = next;
    chart?.setScale('x', { min: range[0], max: range[1] });
    schedule();
  }

  function schedule(): void {
    clearTimeout(timer);
    timer = setTimeout(() => void refresh(), 120);
  }

  async function refresh(): Promise<void> {
    const mine = ++generation;
    const [start, end] = range;
    const pixels = width();
    chartBox.setAttribute('aria-busy', 'true');
    try {
      const fetched = await Promise.all(series.map((s) => fetchSeries(project, s, start, end, pixels)));
      if (mine !== generation || !chart) return;
      const tables = fetched.map((f) => [f.xs, f.avg, f.min, f.max]) as unknown as uPlot.AlignedData[];
      const data = tables.length === 1 ? tables[0] : uPlot.join(tables);
      chart.setData(data);
      const modes = [...new Set(fetched.map((f) => f.mode))].join(', ');
      const points = fetched.reduce((n, f) => n + f.xs.length, 0);
      Object.assign(chartBox.dataset, { start: String(start), end: String(end), mode: modes, points: String(points), pixels: String(pixels) });
      replace(status, `${formatTime(start)} — ${formatTime(end)} · ${modes === 'raw' ? 'raw points' : `aggregates per ${modes}`} · ${points} points for ${pixels} px`);
    } catch (error) {
      if (mine === generation) replace(status, errorBox(error));
    } finally {
      if (mine === generation) chartBox.removeAttribute('aria-busy');
    }
  }

  async function unitPicker(s: Series): Promise<HTMLElement | null> {
    if (!s.unitExternalId) return null;
    const catalog = await units(project);
    const quantity = catalog.find((u) => u.externalId === s.unitExternalId)?.quantity;
    const options = catalog.filter((u) => u.quantity === quantity);
    return h(
      'label',
      {},
      `${s.label} in `,
      h(
        'select',
        {
          'aria-label': `Unit of ${s.label}`,
          onchange: (e: Event) => {
            const chosen = (e.target as HTMLSelectElement).value;
            s.targetUnit = chosen === s.unitExternalId ? undefined : chosen;
            build();
            void refresh();
          },
        },
        options.map((u) => h('option', { value: u.externalId, selected: u.externalId === s.unitExternalId }, `${u.symbol ?? ''} (${u.externalId})`)),
      ),
    );
  }

  void (async () => {
    try {
      const found = await projectCall<Page<Item>>(project, '/timeseries/byids', { items: ids.map((id) => ({ id })) });
      series = found.items.map((t) => ({ id: t.id, label: t.name ?? t.externalId ?? String(t.id), isStep: Boolean(t.isStep), unitExternalId: t.unitExternalId ?? undefined, unit: t.unit ?? undefined }));
      fullRange = range = await initialRange(project, series);
      replace(
        controls,
        h('button', { onclick: () => setRange([range[0] - (range[1] - range[0]) / 2, range[1] - (range[1] - range[0]) / 2].map(Math.round) as [number, number]) }, '◀ Pan'),
        h('button', { onclick: () => setRange([range[0] + (range[1] - range[0]) / 2, range[1] + (range[1] - range[0]) / 2].map(Math.round) as [number, number]) }, 'Pan ▶'),
        h('button', { onclick: () => zoom(1 / 2) }, 'Zoom in'),
        h('button', { onclick: () => zoom(2) }, 'Zoom out'),
        h('button', { onclick: () => setRange(fullRange) }, 'All data'),
        h('span', { class: 'muted' }, ' drag across the plot to zoom; the wheel zooms too '),
        ...(await Promise.all(series.map(unitPicker))),
      );
      build();
      await refresh();
      new ResizeObserver(() => {
        if (!chart || Math.abs(chart.width - width()) < 2) return;
        chart.setSize({ width: width(), height: 380 });
        schedule();
      }).observe(chartBox);
    } catch (error) {
      replace(section, errorBox(error));
    }
  })();
  return section;
}
