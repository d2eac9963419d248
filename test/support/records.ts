/**
 * What the streams and records tests share: a space with record containers, streams of both kinds, and
 * records built from property values.
 */
import { expect } from 'vitest';
import type { Harness } from './harness.js';

export const SPACE = 'rs';
/** A container of the measurements the tests write: text, numbers (one with a unit), a timestamp, a boolean, lists. */
export const READINGS = { type: 'container', space: SPACE, externalId: 'Reading' } as const;
/** A second container, for records with data in several. */
export const NOTES = { type: 'container', space: SPACE, externalId: 'Note' } as const;

export async function ok(h: Harness, path: string, body: unknown, status = 200): Promise<any> {
  const res = await h.post(path, body);
  expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(status);
  return res.body;
}

export async function setUpSchema(h: Harness): Promise<void> {
  await ok(h, '/models/spaces', { items: [{ space: SPACE }, { space: `${SPACE}2` }] });
  await ok(h, '/models/containers', {
    items: [
      {
        space: SPACE,
        externalId: 'Reading',
        usedFor: 'record',
        properties: {
          tag: { type: { type: 'text' }, nullable: false },
          value: { type: { type: 'float64' } },
          pressure: { type: { type: 'float64', unit: { externalId: 'pressure:bar' } } },
          count: { type: { type: 'int64' } },
          at: { type: { type: 'timestamp' } },
          ok: { type: { type: 'boolean' } },
          labels: { type: { type: 'text', list: true } },
          level: { type: { type: 'enum', values: { low: {}, high: {} } } },
          site: { type: { type: 'text' }, defaultValue: 'north' },
        },
      },
      { space: SPACE, externalId: 'Note', usedFor: 'record', properties: { text: { type: { type: 'text' } } } },
    ],
  });
}

export async function createStream(h: Harness, externalId: string, template: string): Promise<void> {
  await ok(h, '/streams', { items: [{ externalId, settings: { template: { name: template } } }] }, 201);
}

/** A record with data in READINGS (and NOTES, when `note` is given). */
export function reading(externalId: string, values: Record<string, unknown>, note?: string, space = SPACE) {
  return {
    space,
    externalId,
    sources: [{ source: READINGS, properties: { tag: externalId, ...values } }, ...(note !== undefined ? [{ source: NOTES, properties: { text: note } }] : [])],
  };
}

export const ALL_READINGS = [{ source: READINGS, properties: ['*'] }];

export const ids = (items: Array<{ externalId: string }>) => items.map((i) => i.externalId);
