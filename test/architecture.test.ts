/**
 * The layering the code keeps: the composition root (src/app.ts with its list of areas, src/areas.ts, and
 * the command line) is the only code that knows which areas exist. The request pipeline, identity, the shared
 * query machinery, storage and the configuration import nothing of an area, so adding an area touches the
 * list and the area's own folder, and nothing below the root imports the root.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve('src');
const ROOT = ['app.ts', 'areas.ts', 'cli.ts'].map((f) => join(SRC, f));
const BELOW_AREAS = ['http', 'auth', 'query', 'storage', 'evals', 'config.ts'].map((p) => join(SRC, p));

function files(path: string): string[] {
  if (statSync(path).isFile()) return [path];
  return readdirSync(path).flatMap((name) => files(join(path, name)));
}

/** The files of src/ a file imports (relative imports, resolved; `.js` names the `.ts` source). */
function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+'(\.[^']+)'/g)].map((m) => resolve(file, '..', m[1]).replace(/\.js$/, '.ts'));
}

describe('layers', () => {
  const below = BELOW_AREAS.flatMap(files).filter((f) => f.endsWith('.ts'));

  it('below the composition root, nothing imports an area', () => {
    const offending = below.flatMap((f) => imports(f).filter((i) => i.startsWith(join(SRC, 'resources'))).map((i) => `${relative(SRC, f)} -> ${relative(SRC, i)}`));
    expect(offending).toEqual([]);
  });

  it('nothing imports the composition root but the command line', () => {
    const all = files(SRC).filter((f) => f.endsWith('.ts') && f !== join(SRC, 'cli.ts'));
    const offending = all.flatMap((f) => imports(f).filter((i) => ROOT.includes(i) && !ROOT.includes(f)).map((i) => `${relative(SRC, f)} -> ${relative(SRC, i)}`));
    expect(offending).toEqual([]);
  });

  it('the scan sees the imports it checks', () => {
    // A guard against a scan that finds nothing: app.ts imports the list of areas and the pipeline.
    expect(imports(join(SRC, 'app.ts'))).toEqual(expect.arrayContaining([join(SRC, 'areas.ts'), join(SRC, 'http', 'pipeline.ts')]));
    expect(below.length).toBeGreaterThan(50);
  });
});
