// How the dashboard's files are sent (server/dashboard/ui.ts): a browser that accepts brotli or
// gzip gets the compressed copy the build wrote beside each file (scripts/build-web.ts), with
// Vary: Accept-Encoding; anything else gets the file as it is. Hashed assets are cached for good,
// index.html never, and both carry the page's CSP. A small dist folder of its own stands in for
// the build.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gzipSync } from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboardUi } from '../../server/dashboard/ui.ts';

const INDEX = '<!doctype html><title>dashboard</title><div id="root"></div>';
const ENTRY = `console.log(${JSON.stringify('x'.repeat(2000))});`;
let dir: string;
let app: FastifyInstance;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cmcp-ui-assets-'));
  fs.mkdirSync(path.join(dir, 'assets'));
  for (const [file, text] of [['index.html', INDEX], ['assets/index-abc123.js', ENTRY]] as const) {
    fs.writeFileSync(path.join(dir, file), text);
    fs.writeFileSync(path.join(dir, `${file}.br`), brotliCompressSync(text));
    fs.writeFileSync(path.join(dir, `${file}.gz`), gzipSync(text));
  }
  app = Fastify();
  await app.register(async (ui) => dashboardUi(ui, { dist: `${dir}/` }), { prefix: '/app' });
  await app.ready();
});

afterAll(async () => {
  await app?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('dashboard files', () => {
  it('a hashed asset goes out brotli-compressed to a browser that accepts it, cached for good, with the CSP', async () => {
    const res = await app.inject({ url: '/app/assets/index-abc123.js', headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-encoding']).toBe('br');
    expect(String(res.headers.vary)).toMatch(/accept-encoding/i);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(res.rawPayload.length).toBeLessThan(ENTRY.length / 5);
    expect(brotliDecompressSync(res.rawPayload).toString()).toBe(ENTRY);
  });

  it('gzip when brotli is not accepted; the file as it is when nothing is', async () => {
    const gz = await app.inject({ url: '/app/assets/index-abc123.js', headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    const plain = await app.inject({ url: '/app/assets/index-abc123.js', headers: { 'accept-encoding': 'identity' } });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body).toBe(ENTRY);
  });

  it("the page's own routes answer index.html, compressed and never cached", async () => {
    for (const url of ['/app/', '/app/keys']) {
      const res = await app.inject({ url, headers: { 'accept-encoding': 'br' } });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['cache-control'], url).toBe('no-cache');
      expect(res.headers['content-type'], url).toMatch(/^text\/html/);
      expect(brotliDecompressSync(res.rawPayload).toString(), url).toBe(INDEX);
    }
  });
});
