// What the gateway benchmarks need of the processes they start: a server's own CPU time, and
// reference scripts (bench/servers/) that print {"port": n} once listening.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import readline from 'node:readline';

const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/**
 * User + system CPU seconds of a process so far (all its threads, GC helpers included), from
 * /proc/<pid>/stat. On a shared machine throughput swings with whatever else runs, while a
 * server's own CPU time per request does not count the time it spent waiting for a core: the
 * steadier measure of what a feature costs.
 */
export function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces, so split after its closing paren).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/**
 * Starts a reference script under this Node (optionally under a wrapper such as taskset) and
 * resolves with the port it prints. The caller stops the child.
 */
export async function startChild(args: string[], wrapper: string[] = []): Promise<{ port: number; child: ChildProcess }> {
  const [command, ...rest] = [...wrapper, process.execPath, ...args];
  const child = spawn(command!, rest, { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = readline.createInterface({ input: child.stdout! });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not start`)), 30_000);
      lines.on('line', (line) => {
        try {
          const msg = JSON.parse(line) as { port?: number };
          if (msg.port) {
            clearTimeout(timer);
            resolve(msg.port);
          }
        } catch {
          // not the ready line
        }
      });
      child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
    });
    return { port, child };
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
}

/**
 * The environment that turns tracing on in a server: `ratio` of the traces sampled
 * (parentbased_traceidratio) and exported over OTLP/HTTP to the sink (bench/servers/otlp-sink.ts)
 * on `sinkPort`; no OTLP metrics or logs.
 */
export function otlpTracing(sinkPort: number, ratio: number): Record<string, string> {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${sinkPort}`,
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: String(ratio),
    OTEL_METRICS_EXPORTER: 'none',
    OTEL_LOGS_EXPORTER: 'none',
  };
}

/** The bytes of OTLP the sink on `sinkPort` has received so far. */
export async function sinkBytes(sinkPort: number): Promise<number> {
  return ((await (await fetch(`http://127.0.0.1:${sinkPort}/bytes`)).json()) as { bytes: number }).bytes;
}
