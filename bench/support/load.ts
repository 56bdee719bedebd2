// The gateway benchmarks' workload and statistics: tools/call of bench_echo (1 credit) from many
// accounts, driven by autocannon over loopback, with the server's own CPU time per request; the
// median of rounds; and the ratio of two runs paired by round.
import type { ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import type { PacedRequest } from './paced.ts';
import { cpuSeconds } from './processes.ts';

/** The protocol generation a workload speaks: 2025 (stateless initialize) or 2026-07-28. */
export type Era = 'legacy' | 'modern';

const MODERN = '2026-07-28';
const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

interface Message {
  method: string;
  params?: Record<string, unknown>;
  /** A notification (no id, no answer). */
  notification?: boolean;
}

/** One message as a client of that generation sends it: body and the headers it adds. */
function framed(era: Era, m: Message, id: number): { body: string; headers: Record<string, string> } {
  const params = era === 'modern' ? { ...m.params, _meta: MODERN_META } : m.params;
  const body = JSON.stringify({ jsonrpc: '2.0', ...(m.notification ? {} : { id }), method: m.method, ...(params ? { params } : {}) });
  if (era === 'legacy') return { body, headers: {} };
  const headers: Record<string, string> = { 'mcp-protocol-version': MODERN, 'mcp-method': m.method };
  if (typeof m.params?.name === 'string') headers['mcp-name'] = m.params.name;
  return { body, headers };
}

const TOOL_CALL: Message = { method: 'tools/call', params: { name: 'bench_echo', arguments: { message: 'ping' } } };

/** What a client sends to connect: 2025 initialize + initialized + tools/list; 2026-07-28 server/discover + tools/list. */
export const CONNECT: Record<Era, Message[]> = {
  legacy: [
    { method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1.0.0' } } },
    { method: 'notifications/initialized', notification: true },
    { method: 'tools/list' },
  ],
  modern: [{ method: 'server/discover' }, { method: 'tools/list' }],
};

/** The same workload as requests for another load generator (bench/support/paced.ts), one per key. */
export function gatewayRequests(keys: string[], era: Era = 'legacy', messages: Message[] = [TOOL_CALL], path: string = PER_SERVER_PATH): PacedRequest[] {
  return keys.flatMap((key) =>
    messages.map((m, i) => {
      const { body, headers } = framed(era, m, i + 1);
      return { path, headers: { ...headersFor(key), ...headers }, body };
    }),
  );
}

/** bench_echo's server; ALL_IN_ONE_PATH reaches the same tool through the all-in-one endpoint. */
export const PER_SERVER_PATH = '/mcp/market-intelligence';
export const ALL_IN_ONE_PATH = '/mcp';
const headersFor = (key: string) => ({ 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': key });

export interface Sample {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  /** CPU time the server process spent per answered request (user + system), in microseconds. */
  cpuUs: number;
}

/** One round against a server: at its maximum, or at `rate` requests per second in all. */
export async function loadGateway(
  target: { port: number; child: ChildProcess },
  keys: string[],
  opts: { connections: number; seconds: number; rate?: number; era?: Era; messages?: Message[]; path?: string },
): Promise<Sample> {
  const cpuBefore = cpuSeconds(target.child.pid);
  const result = await autocannon({
    url: `http://127.0.0.1:${target.port}`,
    connections: opts.connections,
    duration: opts.seconds,
    ...(opts.rate ? { overallRate: opts.rate } : {}),
    requests: gatewayRequests(keys, opts.era, opts.messages, opts.path).map((r) => ({ method: 'POST' as const, ...r })),
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    cpuUs: ((cpuSeconds(target.child.pid) - cpuBefore) / Math.max(1, result.requests.total)) * 1e6,
  };
}

export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The rounds of one run as one: the median of each figure, failures summed. */
export function summarize(rounds: Sample[]): Sample {
  return {
    rps: median(rounds.map((x) => x.rps)),
    p50: median(rounds.map((x) => x.p50)),
    p99: median(rounds.map((x) => x.p99)),
    errors: rounds.reduce((n, x) => n + x.errors, 0),
    non2xx: rounds.reduce((n, x) => n + x.non2xx, 0),
    cpuUs: median(rounds.map((x) => x.cpuUs)),
  };
}

/**
 * Run x against run base, paired by round: each round's ratio compares two runs made back to
 * back under the same machine conditions, so the median of those ratios drifts less than a ratio
 * of medians when the shared machine speeds up or slows down between rounds; the range shows how
 * far single rounds scatter. By throughput (x/base), or by CPU per request (base's over x's: what
 * the throughput ratio would be with a core to itself).
 */
export function pairedRatio(x: Sample[], base: Sample[], by: 'throughput' | 'cpu'): { median: number; text: string } {
  const ratios = x.map((sx, i) => (by === 'cpu' ? base[i]!.cpuUs / sx.cpuUs : sx.rps / base[i]!.rps));
  const sorted = [...ratios].sort((p, q) => p - q);
  const m = median(ratios);
  return { median: m, text: `${m.toFixed(2)} (rounds ${sorted[0]!.toFixed(2)}-${sorted[sorted.length - 1]!.toFixed(2)})` };
}
