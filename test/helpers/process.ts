// Real `cryptomcp serve --json` processes, for guarantees about processes: replicas sharing a
// database, a crash mid-call, benchmarks. Resolves once the ready line is printed.
import { spawn, type ChildProcess } from 'node:child_process';
import readline from 'node:readline';

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  port: number;
  metricsPort: number;
  /** The ready line's description of tracing (describeTracing). */
  tracing: string | undefined;
  stderr: () => string;
}

/** Spawns `cryptomcp serve --json` on the test database and resolves with its ready line. */
export async function spawnServer(
  databaseUrl: string,
  env: Record<string, string> = {},
  /** A command to run the server under, e.g. ['taskset', '-c', '0'] to pin it to a core. */
  wrapper: string[] = [],
  /** How long the server may take to be ready (a loaded machine starts it slowly). */
  readyTimeoutMs = 30_000,
): Promise<ServerProcess> {
  const [command, ...args] = [...wrapper, process.execPath, 'server/cli.ts', 'serve', '--json'];
  const child = spawn(command!, args, {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: '0',
      METRICS_PORT: '0',
      HOST: '127.0.0.1',
      CRYPTOMCP_BENCH_TOOLS: '1',
      LOG_LEVEL: 'silent',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const lines = readline.createInterface({ input: child.stdout! });
  try {
    const ready = await new Promise<{ url: string; port: number; metricsPort: number; tracing: string | undefined }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`server not ready in ${readyTimeoutMs / 1000} s; stderr:\n${stderr}`)), readyTimeoutMs);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`server exited (${code ?? signal}) before it was ready; stderr:\n${stderr}`));
      });
      lines.on('line', (line) => {
        try {
          const parsed = JSON.parse(line) as { url?: string; port?: number; metrics_port?: number; tracing?: string };
          if (typeof parsed.url === 'string' && typeof parsed.port === 'number') {
            clearTimeout(timer);
            resolve({ url: parsed.url, port: parsed.port, metricsPort: parsed.metrics_port ?? 0, tracing: parsed.tracing });
          }
        } catch {
          // not the ready line
        }
      });
    });
    return { child, ...ready, stderr: () => stderr };
  } catch (err) {
    await stopServer(child);
    throw err;
  } finally {
    lines.close();
  }
}

/** SIGTERM, then SIGKILL if the process has not exited within the timeout. */
export async function stopServer(child: ChildProcess, timeoutMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), timeoutMs)));
  const late = await Promise.race([exited.then(() => false), timedOut]);
  clearTimeout(timer);
  if (late) {
    child.kill('SIGKILL');
    await exited;
  }
}

/**
 * POSTs `body` to `url` from another process and gives up (aborts) after `afterMs`: this process
 * runs the service too, and a CPU-bound tool may hold its event loop, so its own timers could not
 * abort in time. Throws if the call was answered before the client gave up.
 */
export async function abandonFromAnotherProcess(url: string, headers: Record<string, string>, body: unknown, afterMs: number): Promise<void> {
  const script = `
    fetch(process.argv[1], { method: 'POST', headers: JSON.parse(process.argv[2]), body: process.argv[3], signal: AbortSignal.timeout(Number(process.argv[4])) })
      .then(() => process.exit(3), (e) => process.exit(e.name === 'TimeoutError' || e.name === 'AbortError' ? 0 : 4));`;
  const allHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers };
  const child = spawn(process.execPath, ['-e', script, url, JSON.stringify(allHeaders), JSON.stringify(body), String(afterMs)], { stdio: 'ignore' });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`the client process ended with ${code} (3: answered before it gave up)`);
}
