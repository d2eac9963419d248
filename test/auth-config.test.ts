/**
 * Configuration of the built-in provider's extra clients (STRATA_CLIENTS): a JSON array or `@file`, with
 * messages that name what is wrong.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';

const clients = (value: string) => loadConfig([], { STRATA_CLIENTS: value }).clients;

describe('STRATA_CLIENTS', () => {
  it('reads clients from JSON or from a file', () => {
    expect(clients('[{"clientId": "reader", "clientSecret": "reader-secret", "groups": ["readers"]}]')).toEqual([
      { clientId: 'reader', clientSecret: 'reader-secret', groups: ['readers'] },
    ]);
    const dir = mkdtempSync(join(tmpdir(), 'strata-clients-'));
    try {
      const file = join(dir, 'clients.json');
      writeFileSync(file, '[{"clientId": "a", "clientSecret": "a-long-secret"}]');
      expect(loadConfig(['--clients', `@${file}`], {}).clients).toEqual([{ clientId: 'a', clientSecret: 'a-long-secret', groups: [] }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(loadConfig([], {}).clients).toEqual([]);
  });

  it('refuses bad entries with a message naming them', () => {
    expect(() => clients('{')).toThrow(/STRATA_CLIENTS \(--clients\) is not valid JSON/);
    expect(() => clients('{}')).toThrow(/must be a JSON array/);
    expect(() => clients('[{"clientId": "strata-admin", "clientSecret": "long-enough"}]')).toThrow(/\[0\]\.clientId: "strata-admin" is the built-in administrator/);
    expect(() => clients('[{"clientId": "a", "clientSecret": "short"}]')).toThrow(/\[0\]\.clientSecret must be a string of at least 8/);
    expect(() => clients('[{"clientId": "a", "clientSecret": "long-enough", "groups": "readers"}]')).toThrow(/\[0\]\.groups must be an array/);
    expect(() => clients('[{"clientId": "a", "clientSecret": "long-enough"}, {"clientId": "a", "clientSecret": "long-enough"}]')).toThrow(/\[1\]\.clientId: "a" is configured twice/);
    expect(() => clients('[{"clientId": "a", "clientSecret": "long-enough", "role": "x"}]')).toThrow(/unknown key "role"/);
    expect(() => clients('@/nonexistent/clients.json')).toThrow(/cannot read \/nonexistent\/clients.json/);
  });
});
