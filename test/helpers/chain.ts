// What the on-chain test suites share: loopback servers standing in for what cannot be reached
// from here (a counting proxy in front of the devnet node, a Solana JSON-RPC replay), the devnet
// manifest written where the service can read it, and raw JSON-RPC reads independent of the code
// under test. bench/onchain.ts uses the counting proxy too.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { DevnetManifest } from '../../server/devnet/devnet.ts';

export interface LoopbackServer {
  url: string;
  close(): Promise<void>;
}

export async function listen(server: http.Server): Promise<LoopbackServer> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Forwards JSON-RPC POSTs to a node and counts the HTTP requests (a JSON-RPC batch is one). */
export async function countingProxy(target: string): Promise<LoopbackServer & { requests(): number }> {
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests += 1;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) })
        .then(async (r) => res.writeHead(r.status, { 'content-type': 'application/json' }).end(Buffer.from(await r.arrayBuffer())))
        .catch(() => res.writeHead(502).end());
    });
  });
  return { ...(await listen(server)), requests: () => requests };
}

export type JsonRpcHandler = (method: string, params: unknown[]) => { result: unknown } | { error: { code: number; message: string } };

/** A JSON-RPC server answering single requests with the handler's result or error. */
export async function jsonRpcReplay(handler: JsonRpcHandler): Promise<LoopbackServer> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const msg = JSON.parse(body) as { id: number; method: string; params: unknown[] };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, ...handler(msg.method, msg.params) }));
    });
  });
  return listen(server);
}

/** An SPL token account as getTokenAccountsByOwner (jsonParsed) documents it. */
export function splTokenAccount(owner: string, mint: string, amount: string, decimals: number) {
  return {
    pubkey: `${mint.slice(0, 40)}Acct`,
    account: {
      data: { program: 'spl-token', parsed: { info: { isNative: false, mint, owner, state: 'initialized', tokenAmount: { amount, decimals, uiAmountString: '0' } }, type: 'account' }, space: 165 },
      executable: false,
      lamports: 2039280,
      owner: 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA',
      rentEpoch: 361,
      space: 165,
    },
  };
}

/** Writes a manifest (optionally changed) to a temp file for DEVNET_MANIFEST. */
export function writeManifest(manifest: DevnetManifest): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cmcp-devnet-')), 'manifest.json');
  fs.writeFileSync(file, JSON.stringify(manifest));
  return file;
}

/** A JSON-RPC call straight to a node, independent of the code under test. */
export async function rawRpc<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return ((await res.json()) as { result: T }).result;
}
