/**
 * The web console in headless Chromium against a Strata on a loopback port: sign-in with the authorization
 * code grant, the event filters, a time series plot and its zoom, following an edge, the request log, and
 * that every API request the console makes carries the signed-in user's token and no other credential.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { namedClients } from '../support/auth.js';
import { artifact, hasChromium, launchChromium } from '../support/browser.js';
import { startSdkHarness, tokenFor, type SdkHarness } from '../support/sdk.js';

const HOUR = 3_600_000;
const START = Date.UTC(2023, 0, 1);
/** Two years of hourly points. */
const POINTS = 2 * 365 * 24;

describe.skipIf(!hasChromium())('web console in Chromium', () => {
  let h: SdkHarness;
  let browser: Browser;
  let page: Page;
  let seriesId: number;
  let valveId: number;
  const apiRequests: { url: string; headers: Record<string, string> }[] = [];

  beforeAll(async () => {
    h = await startSdkHarness({ name: 'console', env: { STRATA_CLIENTS: namedClients('reader') } });
    await h.seed('POST', '/events', {
      items: [
        { externalId: 'e1', type: 'alarm', startTime: START, description: 'pump high pressure', metadata: { site: 'north' } },
        { externalId: 'e2', type: 'alarm', startTime: START + HOUR, description: 'valve stuck', metadata: { site: 'south' } },
        { externalId: 'e3', type: 'notice', startTime: START + 2 * HOUR, description: 'inspection', metadata: { site: 'north' } },
      ],
    });
    const ts = await h.seed('POST', '/timeseries', {
      items: [
        { externalId: 'temp', name: 'Outdoor temperature', unitExternalId: 'temperature:deg_c' },
        { externalId: 'valve', name: 'Valve opening', unitExternalId: 'dimensionless_ratio:percent', isStep: true },
      ],
    });
    [seriesId, valveId] = ts.items.map((t: { id: number }) => t.id);
    // A season, a day and some noise in each hour; the valve moves every few weeks.
    const noise = (i: number) => Math.sin(i * 12.9898) * 43758.5453 - Math.floor(Math.sin(i * 12.9898) * 43758.5453) - 0.5;
    const temp = Array.from({ length: POINTS }, (_, i) => ({ timestamp: START + i * HOUR, value: 8 - 10 * Math.cos((2 * Math.PI * i) / 8760) + 4 * Math.sin((2 * Math.PI * i) / 24) + 2 * noise(i) }));
    const valve = Array.from({ length: POINTS / 400 }, (_, i) => ({ timestamp: START + i * 400 * HOUR, value: Math.round(50 + 45 * Math.sin(i * 1.7)) }));
    for (let i = 0; i < POINTS; i += 10_000) await h.seed('POST', '/timeseries/data', { items: [{ id: seriesId, datapoints: temp.slice(i, i + 10_000) }] });
    await h.seed('POST', '/timeseries/data', { items: [{ id: valveId, datapoints: valve }] });
    await h.seed('POST', '/models/spaces', { items: [{ space: 'plant' }] });
    const node = (externalId: string) => ({ instanceType: 'node', space: 'plant', externalId });
    const edge = (from: string, to: string) => ({
      instanceType: 'edge',
      space: 'plant',
      externalId: `${from}-${to}`,
      type: { space: 'plant', externalId: 'feeds' },
      startNode: { space: 'plant', externalId: from },
      endNode: { space: 'plant', externalId: to },
    });
    await h.seed('POST', '/models/instances', { items: [node('pump'), node('valve'), node('tank'), edge('pump', 'valve'), edge('valve', 'tank')] });
    // A refusal for the request log: a principal that may read events asks for time series.
    await h.seed('POST', '/groups', { items: [{ name: 'reader', sourceId: 'reader', capabilities: [{ eventsAcl: { actions: ['READ'], scope: { all: {} } } }] }] });
    const readerToken = await tokenFor(h.origin, 'reader', 'reader-secret');
    const refused = await fetch(`${h.origin}/api/v1/projects/dev/timeseries/list`, { method: 'POST', headers: { authorization: `Bearer ${readerToken}`, 'content-type': 'application/json', 'x-cdp-sdk': 'CogniteJavaScriptSDK:10.5.0' }, body: '{}' });
    expect(refused.status).toBe(403);

    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    page.on('request', (req) => {
      if (new URL(req.url()).pathname.startsWith('/api/')) apiRequests.push({ url: req.url(), headers: req.headers() });
    });
  });

  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  async function shot(name: string): Promise<void> {
    await page.screenshot({ path: artifact(`console-${name}.png`) });
  }

  it('signs in with the authorization code grant of the built-in provider and lists the projects', async () => {
    await page.goto(`${h.origin}/console`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/oauth2\/authorize/);
    await page.getByLabel('Client secret').fill(h.strata.idp.devClient.secret);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'dev' }).waitFor();
    await shot('projects');
  });

  it('filters events by type and metadata, and searches them', async () => {
    await page.getByRole('link', { name: 'dev' }).click();
    await page.locator('table tbody tr').first().waitFor();
    expect(await page.locator('table tbody tr').count()).toBe(3);
    await page.getByLabel('Type').fill('alarm');
    await page.getByLabel('Metadata key').fill('site');
    await page.getByLabel('Metadata value').fill('north');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.locator('table tbody tr', { hasText: 'e1' }).waitFor();
    expect(await page.locator('table tbody tr').count()).toBe(1);
    await page.getByLabel('Metadata key').fill('');
    await page.getByLabel('From').fill('2023-01-01 00:30');
    await page.getByLabel('To').fill('2023-01-01 01:30');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.locator('table tbody tr', { hasText: 'e2' }).waitFor();
    expect(await page.locator('table tbody tr').count()).toBe(1);
    await page.getByLabel('From').fill('');
    await page.getByLabel('To').fill('');
    await page.getByLabel('Type').fill('');
    await page.getByLabel('Search').fill('stuck');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.locator('table tbody tr', { hasText: 'e2' }).waitFor();
    expect(await page.locator('table tbody tr').count()).toBe(1);
    await shot('events');
  });

  it("pages with the API's cursors", async () => {
    await h.seed('POST', '/events', { items: Array.from({ length: 30 }, (_, i) => ({ externalId: `bulk-${i}`, type: 'bulk' })) });
    await page.getByLabel('Search').fill('');
    await page.getByLabel('Type').fill('bulk');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('page 1 · 25 items').waitFor();
    await page.getByTestId('next-page').click();
    await page.getByText('page 2 · 5 items').waitFor();
    expect(await page.getByTestId('next-page').isDisabled()).toBe(true);
    await page.getByRole('button', { name: '← Back' }).click();
    await page.getByText('page 1 · 25 items').waitFor();
  });

  async function plotState(): Promise<{ start: number; end: number; mode: string; points: number; pixels: number }> {
    const box = page.getByTestId('plot');
    const d = await box.evaluate((el) => ({ ...(el as HTMLElement).dataset }));
    return { start: Number(d.start), end: Number(d.end), mode: String(d.mode), points: Number(d.points), pixels: Number(d.pixels) };
  }

  async function nextPlot(before: { start: number; end: number }): Promise<void> {
    await page.waitForFunction(
      ([s, e]) => {
        const el = document.querySelector('[data-testid=plot]') as HTMLElement | null;
        return !!el && !el.hasAttribute('aria-busy') && el.dataset.start !== undefined && (el.dataset.start !== String(s) || el.dataset.end !== String(e));
      },
      [before.start, before.end],
    );
  }

  it('plots time series from aggregates, and fetches raw points for the range a zoom leaves', async () => {
    await page.goto(`${h.origin}/console/#/p/dev/plot/${seriesId},${valveId}`);
    await nextPlot({ start: NaN, end: NaN });
    const all = await plotState();
    expect(all.start).toBe(START);
    expect(all.end).toBe(START + (POINTS - 1) * HOUR);
    // The temperature's 17520 points come as daily aggregates; the valve's few as they are.
    expect(all.mode).toMatch(/^raw, \d+[smhd]$|^\d+[smhd], raw$/);
    expect(all.points).toBeLessThanOrEqual(2 * 2 * all.pixels);
    await shot('plot');
    await page.getByTestId('plot').screenshot({ path: artifact('console-plot-only.png') });

    // Drag across the middle fifth of the plotting area.
    const over = page.locator('.u-over');
    const area = (await over.boundingBox())!;
    const y = area.y + area.height / 2;
    await page.mouse.move(area.x + area.width * 0.4, y);
    await page.mouse.down();
    await page.mouse.move(area.x + area.width * 0.5, y, { steps: 5 });
    await page.mouse.move(area.x + area.width * 0.6, y, { steps: 5 });
    await page.mouse.up();
    await nextPlot(all);
    const zoomed = await plotState();
    const span = all.end - all.start;
    expect(zoomed.start).toBeGreaterThan(all.start + span * 0.35);
    expect(zoomed.end).toBeLessThan(all.start + span * 0.65);
    expect(zoomed.end - zoomed.start).toBeGreaterThan(span * 0.15);
    expect(zoomed.points).toBeLessThanOrEqual(2 * 2 * zoomed.pixels);

    // Zoomed in far enough, the range holds fewer points than two per pixel: raw points.
    let state = zoomed;
    while (state.mode !== 'raw') {
      await page.getByRole('button', { name: 'Zoom in' }).click();
      await nextPlot(state);
      state = await plotState();
    }
    expect(state.points).toBeGreaterThan(0);
    expect(state.points).toBeLessThanOrEqual(2 * 2 * state.pixels);
    await page.getByLabel('Unit of Outdoor temperature').selectOption('temperature:deg_f');
    await page.locator('.u-legend', { hasText: 'Outdoor temperature [temperature:deg_f]' }).waitFor();
    await shot('plot-raw');
  });

  it('opens a node and follows an edge to its neighbour', async () => {
    await page.goto(`${h.origin}/console/#/p/dev/node/plant/valve`);
    await page.locator('svg.graph [data-node="plant:pump"]').waitFor();
    expect(await page.locator('svg.graph .neighbour').count()).toBe(2);
    await shot('node');
    await page.locator('svg.graph [data-node="plant:tank"]').click();
    await page.getByRole('heading', { name: 'Node plant:tank' }).waitFor();
    await page.locator('svg.graph [data-node="plant:valve"]').waitFor();
    expect(await page.locator('svg.graph .neighbour').count()).toBe(1);
  });

  it('shows the refused request, its principal, SDK and the capability it lacked', async () => {
    await page.goto(`${h.origin}/console/#/p/dev/requests`);
    await page.locator('table.requests tbody tr').first().waitFor();
    await page.getByLabel('refused only').check();
    const row = page.locator('table.requests tbody tr', { hasText: 'POST /timeseries/list' });
    await row.waitFor();
    const text = await row.innerText();
    expect(text).toContain('403');
    expect(text).toContain('reader');
    expect(text).toContain('CogniteJavaScriptSDK:10.5.0');
    expect(text).toContain('timeSeriesAcl:READ');
    await shot('requests');
  });

  it('browses assets as a tree, data sets, files with a preview, sequences, streams and data models', async () => {
    const [root] = (await h.seed('POST', '/assets', { items: [{ externalId: 'site', name: 'Site' }] })).items;
    await h.seed('POST', '/assets', { items: [{ externalId: 'pump-a', name: 'Pump A', parentId: root.id }] });
    await h.seed('POST', '/datasets', { items: [{ externalId: 'ds-plant', name: 'Plant data' }] });
    const file = await h.seed('POST', '/files', { externalId: 'manual', name: 'manual.txt', mimeType: 'text/plain' });
    expect((await fetch(file.uploadUrl, { method: 'PUT', body: 'Check the seal every 500 hours.' })).status).toBeLessThan(300);
    await h.seed('POST', '/sequences', { items: [{ externalId: 'curve', name: 'Pump curve', columns: [{ externalId: 'flow', valueType: 'DOUBLE' }] }] });
    await h.seed('POST', '/sequences/data', { items: [{ externalId: 'curve', columns: ['flow'], rows: [{ rowNumber: 1, values: [12.5] }] }] });
    await h.seed('POST', '/streams', { items: [{ externalId: 'readings', settings: { template: { name: 'BasicLiveData' } } }] });
    const open = async (section: string) => {
      await page.goto(`${h.origin}/console/#/p/dev/${section}`);
      await page.locator('main section').first().waitFor();
      await page.waitForFunction(() => !document.querySelector('main')!.textContent!.includes('Loading…'));
      expect(await page.locator('.error').count(), section).toBe(0);
    };
    // A 2×1 PNG: the preview shows it as an image.
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAYAAAD0In+KAAAAEUlEQVR4nGP4z8DwnwEImBgAIPEC/3FZvnEAAAAASUVORK5CYII=', 'base64');
    const image = await h.seed('POST', '/files', { externalId: 'photo', name: 'photo.png', mimeType: 'image/png' });
    expect((await fetch(image.uploadUrl, { method: 'PUT', body: png })).status).toBeLessThan(300);
    await open('assets');
    await page.getByRole('button', { name: 'Expand Site' }).click();
    await page.getByText('Pump A').waitFor();
    await open('datasets');
    await page.getByText('Plant data').waitFor();
    await open('files');
    await page.getByRole('cell', { name: 'manual.txt' }).click();
    await page.locator('pre.preview', { hasText: 'Check the seal every 500 hours.' }).waitFor();
    await page.getByRole('cell', { name: 'photo.png' }).click();
    await page.waitForFunction(() => (document.querySelector('img.preview') as HTMLImageElement | null)?.naturalWidth === 2);
    await open('sequences');
    await page.getByRole('cell', { name: 'Pump curve' }).click();
    await page.getByRole('cell', { name: '12.5' }).waitFor();
    await open('streams');
    await page.getByRole('cell', { name: 'readings' }).click();
    await page.getByRole('heading', { name: 'Records of readings' }).waitFor();
    await page.locator('.paged p, .paged table').first().waitFor();
    expect(await page.locator('.error').count()).toBe(0);
    await open('models');
    await open('instances');
    await page.getByRole('cell', { name: 'pump', exact: true }).click();
    await page.getByRole('heading', { name: 'Node plant:pump' }).waitFor();
    await open('reference');
    await page.getByText('/api/v1/projects/{project}/events/list').click();
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('pre.result', { hasText: '"externalId": "e1"' }).waitFor();
  });

  it("sends the user's token, and no other credential, with every API request", async () => {
    const session = JSON.parse((await page.evaluate(() => sessionStorage.getItem('strata-console.session')))!) as { token: string };
    const claims = JSON.parse(Buffer.from(session.token.split('.')[1], 'base64url').toString());
    expect(claims.sub).toBe('strata-admin');
    expect(apiRequests.length).toBeGreaterThan(10);
    for (const req of apiRequests) {
      expect(req.headers.authorization, req.url).toBe(`Bearer ${session.token}`);
      expect(req.headers.cookie, req.url).toBeUndefined();
      expect(req.headers['api-key'], req.url).toBeUndefined();
    }
  });

  it('goes back to sign-in when the API no longer accepts the token, and then to where the user was', async () => {
    await page.goto(`${h.origin}/console/#/p/dev/events`);
    await page.getByText('pump high pressure').waitFor();
    // A token the server refuses (its signature changed), as a revoked or expired one is refused.
    await page.evaluate(() => {
      const session = JSON.parse(sessionStorage.getItem('strata-console.session')!) as { token: string; expiresAt: number };
      sessionStorage.setItem('strata-console.session', JSON.stringify({ ...session, token: `${session.token.slice(0, -4)}AAAA` }));
    });
    await page.goto(`${h.origin}/console/#/p/dev/timeseries`);
    await page.getByRole('alert').filter({ hasText: 'no longer accepts your sign-in (401' }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('strata-console.session'))).toBeNull();
    await shot('signed-out');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/oauth2\/authorize/);
    await page.getByLabel('Client secret').fill(h.strata.idp.devClient.secret);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Outdoor temperature').waitFor();
    expect(new URL(page.url()).hash).toBe('#/p/dev/timeseries');
  });

  it('shows the sign-in page by itself once the token expires', async () => {
    await page.goto(`${h.origin}/console/#/p/dev/events`);
    await page.getByText('pump high pressure').waitFor();
    // The token now ends in two seconds; moving to another page reads that end.
    await page.evaluate(() => {
      const session = JSON.parse(sessionStorage.getItem('strata-console.session')!) as { token: string; expiresAt: number };
      sessionStorage.setItem('strata-console.session', JSON.stringify({ ...session, expiresAt: Date.now() + 2000 }));
      location.hash = '#/p/dev/timeseries';
    });
    await page.getByRole('alert').filter({ hasText: 'Your sign-in has expired' }).waitFor({ timeout: 15_000 });
    expect(await page.getByRole('button', { name: 'Sign in' }).count()).toBe(1);
  });
});
