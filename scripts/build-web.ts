// npm run build:web (also run by `npm install` / `npm ci` through "prepare"): builds the dashboard
// front end (web/) with Vite into web/dist, which the service serves under /app, and checks the
// first page's size: the entry chunk, the chunks it imports statically and its CSS, gzipped, must
// stay under 500 kB (issue 8). Pages loaded later (Usage with its charts) are reported apart.
// Each asset and index.html is also written compressed (.br, .gz) beside itself, which the
// service sends to browsers that accept it (server/dashboard/ui.ts): on a slow link the bytes
// sent, not the bundle's size on disk, decide how soon the page shows.
//
// A build whose inputs (web/'s sources and settings, the lockfile, this script) have not changed
// since the last one is skipped: `npx cryptomcp` on a fresh npm cache installs the checkout and
// runs "prepare", which rebuilt web/dist in place (8 s) under a service that may be serving it.
// The inputs' hash is kept in web/dist/.inputs.json beside the sizes it produced.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build } from 'vite';

const ROOT = path.resolve(import.meta.dirname, '..');
const WEB = path.join(ROOT, 'web');
const DIST = path.join(WEB, 'dist');
const FIRST_PAGE_LIMIT = 500 * 1024;
const STAMP = path.join(DIST, '.inputs.json');

/** One hash over every file the build reads from the project (node_modules through the lockfile). */
export function webInputsHash(): string {
  const hash = createHash('sha256');
  const files = [
    path.join(ROOT, 'package-lock.json'),
    path.join(ROOT, 'scripts/build-web.ts'),
    ...fs
      .readdirSync(WEB, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => path.join(e.parentPath, e.name))
      .filter((f) => !f.startsWith(DIST + path.sep)),
  ].sort();
  for (const file of files) hash.update(path.relative(ROOT, file)).update('\0').update(fs.readFileSync(file)).update('\0');
  return hash.digest('hex');
}

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

/** The sizes of the build in web/dist when it was made from these very inputs, else undefined. */
export function upToDate(inputs: string): { firstPageGzip: number; lazyGzip: number } | undefined {
  try {
    const stamp = JSON.parse(fs.readFileSync(STAMP, 'utf8')) as { inputs: string; firstPageGzip: number; lazyGzip: number };
    return stamp.inputs === inputs && fs.existsSync(path.join(DIST, 'index.html')) ? stamp : undefined;
  } catch {
    return undefined;
  }
}

if (import.meta.main) {
  const inputs = webInputsHash();
  const current = upToDate(inputs);
  if (current) console.log('build:web: web/dist is up to date with web/ and the lockfile (delete web/dist to build anyway)');
  const { firstPageGzip, lazyGzip } = current ?? (await buildWeb());
  if (!current) fs.writeFileSync(STAMP, `${JSON.stringify({ inputs, firstPageGzip, lazyGzip })}\n`);
  const kb = (n: number) => `${(n / 1024).toFixed(1)} kB`;
  console.log(`build:web: first page ${kb(firstPageGzip)} gzipped (limit ${kb(FIRST_PAGE_LIMIT)}); pages loaded later ${kb(lazyGzip)} gzipped`);
  if (firstPageGzip > FIRST_PAGE_LIMIT) {
    console.error('build:web: the first page is over its size budget');
    process.exit(1);
  }
}
