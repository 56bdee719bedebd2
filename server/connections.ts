// Bounds on what one client can hold open: connections per client address, and requests one
// connection may have unanswered at once (HTTP/1.1 pipelining). Without them a client that never
// reads can make the service run and hold answers for as many requests as it cares to send,
// and one address can keep thousands of idle sockets until the header timeout.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ApiError } from './errors.ts';

export interface ConnectionLimits {
  /** Unanswered requests one connection may have; the next is refused with 429 (the connection then closes). */
  maxPipelined: number;
  /** Open connections one client address may hold; more are closed at once. 0: no cap. */
  perAddress: number;
}

/** A client must send its headers within this long (Node's default is 60 s). */
export const HEADERS_TIMEOUT_MS = 10_000;
/** …and its whole request within this long (Node's default is 300 s). */
export const REQUEST_TIMEOUT_MS = 30_000;

export function limitConnections(app: FastifyInstance, limits: ConnectionLimits): void {
  capPerAddress(app.server, limits.perAddress);
  const inFlight = new WeakMap<Socket, number>();
  app.addHook('onRequest', (request, reply, done) => {
    const socket = request.raw.socket;
    const n = (inFlight.get(socket) ?? 0) + 1;
    inFlight.set(socket, n);
    reply.raw.once('close', () => inFlight.set(socket, (inFlight.get(socket) ?? 1) - 1));
    if (n > limits.maxPipelined) {
      done(
        new ApiError(
          'RATE_LIMITED',
          `Too many requests waiting on one connection (at most ${limits.maxPipelined}); read the answers before sending more.`,
          { limit_in_flight_per_connection: limits.maxPipelined, retry_after_seconds: 1 },
          { 'retry-after': '1', connection: 'close' },
        ),
      );
      return;
    }
    done();
  });
}

function capPerAddress(server: Server, cap: number): void {
  if (cap <= 0) return;
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const n = (open.get(address) ?? 0) + 1;
    if (n > cap) {
      socket.destroy();
      return;
    }
    open.set(address, n);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
}
