// The operator's real entry point, `node operator/main.ts`, as the image and the chart run it,
// against a stand-in API server: resolves once its "started" line is printed.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import readline from 'node:readline';
import { stopServer } from '../../helpers/process.ts';
import type { StandInApiServer } from './apiserver.ts';
import { ROOT } from './crd-schema.ts';
import { writeKubeconfig } from './kubectl.ts';

export interface OperatorProcess {
  child: ChildProcess;
  /** http://127.0.0.1:<metrics port>, where /metrics, /healthz and /readyz answer. */
  base: string;
  identity: string;
  stderr: () => string;
  /** SIGTERM (SIGKILL after 5 s), then removes the kubeconfig. */
  stop: () => Promise<void>;
}

/**
 * Only PATH and what `env` gives reach the process (plus the kubeconfig and loopback ports), so
 * every other setting is the entry point's own default.
 */
export async function spawnOperator(api: StandInApiServer, env: Record<string, string>, main = 'operator/main.ts'): Promise<OperatorProcess> {
  const kube = writeKubeconfig(api.url);
  const child = spawn(process.execPath, [main], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, KUBECONFIG: kube.file, METRICS_PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const stop = async () => {
    await stopServer(child);
    fs.rmSync(kube.dir, { recursive: true, force: true });
  };
  const lines = readline.createInterface({ input: child.stdout! });
  try {
    const started = await new Promise<{ metrics_port: number; identity: string }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`operator printed no started line in 30 s; stderr:\n${stderr}`)), 30_000);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`operator exited ${code} before starting: ${stderr}`));
      });
      lines.on('line', (line) => {
        clearTimeout(timer);
        resolve(JSON.parse(line) as { metrics_port: number; identity: string });
      });
    });
    return { child, base: `http://127.0.0.1:${started.metrics_port}`, identity: started.identity, stderr: () => stderr, stop };
  } catch (err) {
    await stop();
    throw err;
  } finally {
    lines.close();
  }
}

/** One sample's value from a Prometheus text exposition (0 when absent), e.g. sample(text, 'x{a="b"}'). */
export function sample(metrics: string, series: string): number {
  for (const line of metrics.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return 0;
}

