import { defineConfig } from 'vite';

// Served by Strata at /console (src/resources/console/static.ts) from dist/console.
export default defineConfig({
  base: '/console/',
  logLevel: 'warn',
  build: { outDir: '../dist/console', emptyOutDir: true, chunkSizeWarningLimit: 200 },
});
