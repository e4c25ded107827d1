/**
 * Builds the console UI into dist/ (served by `orrery-console` at `/`). `npm run dev` serves it on
 * :5173 and proxies `/api` to a console on ORRERY_CONSOLE_URL (default http://127.0.0.1:8080).
 */
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // The console's CSP allows no inline script: keep the module preload polyfill out of index.html.
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 1024,
  },
  server: {
    proxy: { '/api': { target: process.env.ORRERY_CONSOLE_URL ?? 'http://127.0.0.1:8080', changeOrigin: false } },
  },
});
