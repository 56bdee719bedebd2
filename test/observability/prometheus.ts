// A real Prometheus server (Debian's `prometheus` package) for tests: a temporary config scraping
// the given targets every second, optional rule files evaluated every second, a free loopback
// port and a temporary TSDB; plus the few HTTP API calls the tests make.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';

export interface PromSample {
  metric: Record<string, string>;
  value: [number, string];
}

export interface RunningPrometheus {
  url: string;
  /** An instant query; resolves with the vector (throws on an API error). */
  query(expr: string, time?: number): Promise<PromSample[]>;
  /** The raw API answer of an instant query, for checking that an expression is accepted. */
  queryRaw(expr: string, time?: number): Promise<{ status: string; error?: string; errorType?: string }>;
  /** Resolves once every target is scraped and up (Prometheus needs a few seconds). */
  waitForTargetsUp(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export const PROMETHEUS_BIN = process.env.PROMETHEUS_BIN ?? '/usr/bin/prometheus';
export const PROMTOOL_BIN = process.env.PROMTOOL_BIN ?? '/usr/bin/promtool';

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function startPrometheus(opts: { targets: string[]; ruleFiles?: string[] }): Promise<RunningPrometheus> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cmcp-prom-'));
  const config = {
    global: { scrape_interval: '1s', scrape_timeout: '900ms', evaluation_interval: '1s' },
    rule_files: opts.ruleFiles ?? [],
    scrape_configs: [{ job_name: 'cryptomcp', static_configs: [{ targets: opts.targets }] }],
  };
  fs.writeFileSync(path.join(dir, 'prometheus.yml'), YAML.stringify(config));
  const port = await freePort();
  const child: ChildProcess = spawn(
    PROMETHEUS_BIN,
    [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const url = `http://127.0.0.1:${port}`;

  const api = async (pathAndQuery: string) => {
    const res = await fetch(`${url}${pathAndQuery}`);
    return (await res.json()) as { status: string; error?: string; errorType?: string; data?: unknown };
  };
  const queryRaw = (expr: string, time?: number) =>
    api(`/api/v1/query?${new URLSearchParams({ query: expr, ...(time !== undefined ? { time: time.toFixed(3) } : {}) })}`);

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };

  // Ready when the API answers.
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode}): ${stderr}`);
    const ok = await fetch(`${url}/-/ready`).then((r) => r.ok, () => false);
    if (ok) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`prometheus not ready in 30 s: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  return {
    url,
    queryRaw,
    async query(expr, time) {
      const answer = await queryRaw(expr, time);
      if (answer.status !== 'success') throw new Error(`${expr}: ${answer.errorType}: ${answer.error}`);
      const data = (answer as { data: { resultType: string; result: unknown } }).data;
      if (data.resultType === 'scalar') {
        return [{ metric: {}, value: data.result as [number, string] }];
      }
      return data.result as PromSample[];
    },
    async waitForTargetsUp(timeoutMs = 60_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const answer = (await api('/api/v1/targets')) as { data?: { activeTargets: { health: string }[] } };
        const targets = answer.data?.activeTargets ?? [];
        if (targets.length === opts.targets.length && targets.every((t) => t.health === 'up')) return;
        if (Date.now() > until) throw new Error(`targets not up: ${JSON.stringify(targets)}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    },
    stop,
  };
}
