/**
 * Where the script of a worker thread of storage/ is. Workers run compiled JavaScript: beside this module
 * when it runs from the build, and from the build too when it runs from the TypeScript sources (tests),
 * which `npm test` makes first.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export function workerUrl(script: string): URL {
  const own = new URL(`./${script}`, import.meta.url);
  if (existsSync(fileURLToPath(own))) return own;
  return new URL(`../../dist/storage/${script}`, import.meta.url);
}
