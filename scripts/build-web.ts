// npm run build:web (also run by `npm install` / `npm ci` through "prepare"): builds the dashboard
// front end (web/) with Vite into web/dist, which the service serves under /app, and checks the
// first page's size: the entry chunk, the chunks it imports statically and its CSS, gzipped, must
// stay under 500 kB (issue 8). Pages loaded later (Usage with its charts) are reported apart.
// Each asset and index.html is also written compressed (.br, .gz) beside itself, which the
// service sends to browsers that accept it (server/dashboard/ui.ts): on a slow link the bytes
// sent, not the bundle's size on disk, decide how soon the page shows.
import fs from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build } from 'vite';

const ROOT = path.resolve(import.meta.dirname, '..');
const WEB = path.join(ROOT, 'web');
const DIST = path.join(WEB, 'dist');
const FIRST_PAGE_LIMIT = 500 * 1024;

interface ManifestChunk {
  file: string;
  isEntry?: boolean;
  imports?: string[];
  dynamicImports?: string[];
  css?: string[];
}

export async function buildWeb(): Promise<{ firstPageGzip: number; lazyGzip: number }> {
  await build({ configFile: path.join(WEB, 'vite.config.ts'), logLevel: 'warn' });
  const manifest = JSON.parse(fs.readFileSync(path.join(DIST, '.vite/manifest.json'), 'utf8')) as Record<string, ManifestChunk>;
  const gz = (file: string) => gzipSync(fs.readFileSync(path.join(DIST, file)), { level: 9 }).length;
  const first = new Set<string>();
  const visit = (key: string) => {
    const chunk = manifest[key];
    if (!chunk || first.has(chunk.file)) return;
    first.add(chunk.file);
    for (const css of chunk.css ?? []) first.add(css);
    for (const imported of chunk.imports ?? []) visit(imported);
  };
  for (const [key, chunk] of Object.entries(manifest)) if (chunk.isEntry) visit(key);
  first.add('index.html');
  const all = new Set(Object.values(manifest).flatMap((c) => [c.file, ...(c.css ?? [])]));
  for (const file of [...all, 'index.html']) {
    const bytes = fs.readFileSync(path.join(DIST, file));
    fs.writeFileSync(path.join(DIST, `${file}.gz`), gzipSync(bytes, { level: 9 }));
    fs.writeFileSync(path.join(DIST, `${file}.br`), brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
  }
  const firstPageGzip = [...first].reduce((n, f) => n + gz(f), 0);
  const lazyGzip = [...all].filter((f) => !first.has(f)).reduce((n, f) => n + gz(f), 0);
  return { firstPageGzip, lazyGzip };
}

if (import.meta.main) {
  const { firstPageGzip, lazyGzip } = await buildWeb();
  const kb = (n: number) => `${(n / 1024).toFixed(1)} kB`;
  console.log(`build:web: first page ${kb(firstPageGzip)} gzipped (limit ${kb(FIRST_PAGE_LIMIT)}); pages loaded later ${kb(lazyGzip)} gzipped`);
  if (firstPageGzip > FIRST_PAGE_LIMIT) {
    console.error('build:web: the first page is over its size budget');
    process.exit(1);
  }
}
