/**
 * Headless Chromium (Debian's `chromium`) driven by playwright-core, for the web console's end-to-end tests.
 * Screenshots go to .artifacts/ (not committed), where CI keeps them.
 */
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { hasProgram } from './external.js';

export const CHROMIUM = 'chromium';
export const hasChromium = (): boolean => hasProgram(CHROMIUM, 'chromium');

export const ARTIFACTS = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '.artifacts');

export function artifact(name: string): string {
  mkdirSync(ARTIFACTS, { recursive: true });
  return join(ARTIFACTS, name);
}

export async function launchChromium(): Promise<Browser> {
  // Chromium's sandbox needs user namespaces, which a root or container run rarely has.
  return chromium.launch({ executablePath: process.env.STRATA_CHROMIUM ?? '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
}
