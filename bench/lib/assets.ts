/**
 * Data files the compiled sources read relative to themselves: the units catalog is read from
 * `../../../catalog/units/` of src/resources/units/, which under `.bench-build/` is `.bench-build/catalog`.
 * A link to the source tree's `catalog/` makes it resolve. The entry points (run.ts, server.ts) import this
 * module first, so it runs before any source module is evaluated.
 */
import { existsSync, symlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const build = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const link = join(build, 'catalog');
if (!existsSync(link)) {
  try {
    symlinkSync(join('..', 'catalog'), link, 'dir');
  } catch (error) {
    if ((error as { code?: string }).code !== 'EEXIST') throw error;
  }
}
