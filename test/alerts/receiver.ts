// A local webhook receiver, as a user would run one: it verifies each delivery's Standard
// Webhooks signature (webhook-id, webhook-timestamp, webhook-signature) with the standardwebhooks
// package and the endpoint's secret, and records what it accepted. It can be told to fail the
// first N deliveries of each message (HTTP 500), to see retries. bench/alerts.ts uses it too.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  id: string;
  body: { type: string; timestamp: string; data: Record<string, unknown> };
  at: number;
}

export interface Receiver {
  url: string;
  /** Set once the rule's answer gives the endpoint secret. */
  secret: string | undefined;
  received: Received[];
  /** Requests seen per webhook-id, failed ones included. */
  attempts: Map<string, number>;
  /** Requests whose signature did not verify (answered 400). */
  rejected: number;
  failFirst: number;
  /** Resolves when `n` messages have been accepted. */
  waitFor(n: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(opts: { failFirst?: number; now?: () => number } = {}): Promise<Receiver> {
  const waiters: { n: number; resolve: () => void }[] = [];
  const state: Receiver = {
    url: '',
    secret: undefined,
    received: [],
    attempts: new Map(),
    rejected: 0,
    failFirst: opts.failFirst ?? 0,
    waitFor: (n, timeoutMs = 30_000) =>
      new Promise<Received[]>((resolve, reject) => {
        if (state.received.length >= n) return resolve(state.received);
        const timer = setTimeout(() => reject(new Error(`only ${state.received.length} of ${n} webhooks arrived`)), timeoutMs);
        waiters.push({ n, resolve: () => (clearTimeout(timer), resolve(state.received)) });
      }),
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const payload = Buffer.concat(chunks).toString('utf8');
      const id = String(req.headers['webhook-id']);
      const seen = (state.attempts.get(id) ?? 0) + 1;
      state.attempts.set(id, seen);
      let body: Received['body'];
      try {
        body = new Webhook(state.secret!).verify(payload, req.headers as Record<string, string>) as Received['body'];
      } catch {
        state.rejected++;
        res.writeHead(400).end();
        return;
      }
      if (seen <= state.failFirst) {
        res.writeHead(500).end();
        return;
      }
      state.received.push({ id, body, at: (opts.now ?? Date.now)() });
      res.writeHead(204).end();
      for (const w of waiters.filter((x) => state.received.length >= x.n)) w.resolve();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return state;
}
