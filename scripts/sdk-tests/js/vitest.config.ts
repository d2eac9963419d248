// Runs the official JavaScript SDK's integration tests from a copy of its packages against Strata: the
// packages import each other by name, and their login goes to Strata's identity provider.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
export default defineConfig({
  resolve: {
    alias: [
      { find: /^\.\/login$/, replacement: here('./strata-login.ts') },
      { find: /^@cognite\/sdk(-stable)?$/, replacement: here('./packages/stable/src/index.ts') },
      { find: /^@cognite\/sdk-(core|beta|alpha)$/, replacement: here('./packages/$1/src/index.ts') },
      { find: /^(stable|alpha)\/src\/(.*)$/, replacement: here('./packages/$1/src/$2') },
    ],
  },
  test: { hookTimeout: 30_000, testTimeout: 25_000, fileParallelism: false },
});
