/**
 * The web console signing in against a project's own OpenID Connect provider, in headless Chromium: the
 * authorization code grant with PKCE at that provider, the token it gives carried on every API request, and
 * the projects and data that token reaches, and nothing of the projects that trust another provider.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { artifact, hasChromium, launchChromium } from '../support/browser.js';
import { LOOPBACK_PROVIDERS, startTestIssuer, trustedIssuer, type TestIssuer } from '../support/oidc-issuer.js';
import { startSdkHarness, type SdkHarness } from '../support/sdk.js';

describe.skipIf(!hasChromium())('web console signed in at an external provider', () => {
  let h: SdkHarness;
  let idp: TestIssuer;
  let browser: Browser;
  let page: Page;
  const apiRequests: { path: string; authorization?: string }[] = [];
  const issued: string[] = [];

  beforeAll(async () => {
    idp = await startTestIssuer();
    idp.clients.set('console-app', { secret: 'unused', groups: ['operators'] });
    h = await startSdkHarness({ name: 'console-external', env: LOOPBACK_PROVIDERS });
    // The project "other" holds an event and a group for the provider's "operators", then trusts that provider.
    const admin = async (path: string, body: unknown) => {
      const res = await fetch(`${h.origin}/api/v1/projects/other${path}`, { method: 'POST', headers: { authorization: `Bearer ${h.token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(res.status, await res.clone().text()).toBeLessThan(300);
    };
    await admin('/events', { items: [{ externalId: 'ext-1', type: 'trip', description: 'seen through the external provider' }] });
    await admin('/groups', { items: [{ name: 'operators', sourceId: 'operators', capabilities: [{ eventsAcl: { actions: ['READ'], scope: { all: {} } } }] }] });
    await admin('/update', { update: { oidcConfiguration: { set: trustedIssuer(idp) } } });
    await h.seed('POST', '/events', { items: [{ externalId: 'dev-only', type: 'trip' }] });

    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    page.on('request', (req) => {
      const url = new URL(req.url());
      if (url.origin === h.origin && url.pathname.startsWith('/api/')) apiRequests.push({ path: url.pathname, authorization: req.headers().authorization });
    });
    page.on('response', async (res) => {
      if (res.url() === idp.tokenUrl && res.ok()) issued.push(((await res.json()) as { access_token: string }).access_token);
    });
  });

  afterAll(async () => {
    await browser?.close();
    await h?.close();
    await idp?.close();
  });

  it('signs in with the code grant at the provider, lists only the project that trusts it, and reads its events with that token', async () => {
    await page.goto(`${h.origin}/console`);
    await page.getByLabel('Issuer').fill(idp.issuer);
    await page.getByLabel('Client id').fill('console-app');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'other' }).waitFor();
    expect(await page.getByRole('link', { name: 'dev' }).count()).toBe(0);
    await page.getByRole('link', { name: 'other' }).click();
    await page.locator('table tbody tr', { hasText: 'ext-1' }).waitFor();
    expect(await page.locator('table tbody tr').count()).toBe(1);
    await page.screenshot({ path: artifact('console-external-events.png') });

    expect(issued).toHaveLength(1);
    expect(apiRequests.length).toBeGreaterThan(1);
    for (const r of apiRequests) expect(r.authorization, r.path).toBe(`Bearer ${issued[0]}`);
    expect(apiRequests.some((r) => r.path === '/api/v1/projects/other/events/list' || r.path.startsWith('/api/v1/projects/other/events'))).toBe(true);
  });
});
