// The dashboard's front end, served by the service under /app (server/dashboard/ui.ts).
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  root: import.meta.dirname,
  base: '/app/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    manifest: true,
    // The gzip sizes are printed by the build; scripts/build-web.ts checks the first page's total.
    reportCompressedSize: true,
    chunkSizeWarningLimit: 800,
  },
});
