/**
 * Where the script of a worker thread is (beside the module `beside`, storage/ unless given). Workers run
 * compiled JavaScript: beside the module when it runs from the build, and from the build too when it runs
 * from the TypeScript sources (tests), which `npm test` makes first.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export function workerUrl(script: string, beside: string = import.meta.url): URL {
  const own = new URL(`./${script}`, beside);
  if (existsSync(fileURLToPath(own))) return own;
  // The same place under dist/ as the module `beside` has under src/.
  return new URL(own.href.replace(/\/src\/(?!.*\/src\/)/, '/dist/'));
}
