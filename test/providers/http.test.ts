// The upstream HTTP client and TTL cache (server/providers/http.ts), over real HTTP on loopback.
// The CoinGecko-shaped scenarios (retry after 500, timeout, 429, 404) are in live.test.ts; this
// file covers the client's own rules: backoff, Retry-After forms, what is never retried, aborts.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { getJson, TtlCache } from '../../server/providers/http.ts';
import type { GetJsonOptions } from '../../server/providers/http.ts';
import { ProviderError } from '../../server/errors.ts';

interface Step {
  status: number;
  body?: string;
  headers?: Record<string, string>;
  /** Never answer: the client has to give up. */
  hang?: boolean;
}

let server: http.Server;
let baseUrl: string;
let script: Step[] = [];
let requests: { url: string; headers: http.IncomingHttpHeaders }[] = [];
let aborted = 0;
let sleeps: number[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    requests.push({ url: req.url ?? '', headers: req.headers });
    res.on('close', () => {
      if (!res.writableFinished) aborted++;
    });
    const step = script.shift() ?? { status: 200, body: '{"ok":true}' };
    if (step.hang) return;
    res.writeHead(step.status, { 'content-type': 'application/json', ...step.headers });
    res.end(step.body ?? '{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  script = [];
  requests = [];
  aborted = 0;
  sleeps = [];
});

function options(overrides: Partial<GetJsonOptions> = {}): GetJsonOptions {
  return {
    provider: 'live:test',
    timeoutMs: 2000,
    retries: 2,
    baseDelayMs: 100,
    maxDelayMs: 1500,
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    ...overrides,
  };
}

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

describe('getJson', () => {
  it('returns the parsed body and sends accept plus the given headers', async () => {
    script = [{ status: 200, body: '{"bitcoin":{"usd":67187.34}}' }];
    const body = await getJson(`${baseUrl}/simple/price`, options({ headers: { 'x-test': 'yes' } }));
    expect(body).toEqual({ bitcoin: { usd: 67187.34 } });
    expect(requests[0]?.headers.accept).toBe('application/json');
    expect(requests[0]?.headers['x-test']).toBe('yes');
  });

  it('backs off exponentially with full jitter, capped at maxDelayMs', async () => {
    script = [{ status: 503 }, { status: 502 }, { status: 500 }, { status: 200, body: '[]' }];
    await getJson(`${baseUrl}/x`, options({ retries: 3, baseDelayMs: 100, maxDelayMs: 300, random: () => 1 }));
    expect(requests).toHaveLength(4);
    // random() * min(max, base * 2^n): 100, 200, then capped at 300.
    expect(sleeps).toEqual([100, 200, 300]);
  });

  it('scales the backoff by random() (full jitter)', async () => {
    script = [{ status: 500 }, { status: 200, body: '[]' }];
    await getJson(`${baseUrl}/x`, options({ random: () => 0.25 }));
    expect(sleeps).toEqual([25]);
  });

  it('honours a Retry-After given as an HTTP date', async () => {
    const now = Date.parse('2026-11-21T12:00:00Z');
    script = [
      { status: 429, headers: { 'retry-after': 'Sat, 21 Nov 2026 12:00:02 GMT' } },
      { status: 200, body: '{}' },
    ];
    await getJson(`${baseUrl}/x`, options({ now: () => now, maxDelayMs: 5000 }));
    expect(sleeps).toEqual([2000]);
  });

  it('honours a Retry-After on a 503 too', async () => {
    script = [{ status: 503, headers: { 'retry-after': '1' } }, { status: 200, body: '{}' }];
    await getJson(`${baseUrl}/x`, options());
    expect(sleeps).toEqual([1000]);
  });

  it('gives up at once when Retry-After is longer than maxDelayMs', async () => {
    script = [{ status: 429, headers: { 'retry-after': '60' } }, { status: 200, body: '{}' }];
    const error = await failure(getJson(`${baseUrl}/x`, options({ maxDelayMs: 5000 })));
    expect(error.kind).toBe('rate_limited');
    expect(requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('never retries a 4xx other than 429', async () => {
    script = [{ status: 400, body: '{"error":"invalid vs_currency"}' }, { status: 200, body: '{}' }];
    const error = await failure(getJson(`${baseUrl}/x`, options()));
    expect(error).toMatchObject({ kind: 'error', status: 400, provider: 'live:test' });
    expect(requests).toHaveLength(1);
  });

  it('retries network errors and reports them as kind error', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));

    const error = await failure(getJson(`http://127.0.0.1:${port}/x`, options({ retries: 2 })));
    expect(error.kind).toBe('error');
    expect(error.status).toBeUndefined();
    expect(sleeps).toHaveLength(2);
  });

  it('rejects a body that is not JSON without retrying', async () => {
    script = [{ status: 200, body: '<html>maintenance</html>' }];
    const error = await failure(getJson(`${baseUrl}/x`, options()));
    expect(error.kind).toBe('error');
    expect(requests).toHaveLength(1);
  });

  it('keeps query strings (which may hold keys) out of error messages', async () => {
    script = [{ status: 401 }];
    const error = await failure(getJson(`${baseUrl}/x?x_cg_demo_api_key=secret-key`, options()));
    expect(error.message).not.toContain('secret-key');
    expect(error.message).toContain('/x');
  });

  it("on the caller's abort: stops the request and rethrows the abort reason, not a ProviderError", async () => {
    script = [{ status: 200, hang: true }];
    const controller = new AbortController();
    const pending = getJson(`${baseUrl}/x`, options({ signal: controller.signal }));
    await vi.waitFor(() => expect(requests).toHaveLength(1));
    controller.abort(new Error('client went away'));
    await expect(pending).rejects.toThrow('client went away');
    await vi.waitFor(() => expect(aborted).toBe(1));
    expect(sleeps).toEqual([]);
  });
});

describe('TtlCache', () => {
  it('serves a value until its TTL has passed', () => {
    let now = 1_000;
    const cache = new TtlCache<string>({ ttlMs: 100, now: () => now });
    cache.set('k', 'v');
    now += 99;
    expect(cache.get('k')).toBe('v');
    now += 1;
    expect(cache.get('k')).toBeUndefined();
  });

  it('drops the least recently used entry when full', () => {
    const cache = new TtlCache<number>({ ttlMs: 1000, maxEntries: 2 });
    cache.set('a', 1);
    cache.set('b', 2);
    cache.get('a');
    cache.set('c', 3);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe(1);
    expect(cache.get('c')).toBe(3);
    expect(cache.size).toBe(2);
  });

  it('runs one load for concurrent calls with the same key (single flight)', async () => {
    const cache = new TtlCache<number>({ ttlMs: 1000 });
    let loads = 0;
    const load = async () => {
      loads++;
      await new Promise((resolve) => setImmediate(resolve));
      return 42;
    };
    const values = await Promise.all([cache.getOrLoad('k', load), cache.getOrLoad('k', load), cache.getOrLoad('k', load)]);
    expect(values).toEqual([42, 42, 42]);
    expect(loads).toBe(1);
    await cache.getOrLoad('k', load);
    expect(loads).toBe(1);
  });

  it('does not cache a failed load', async () => {
    const cache = new TtlCache<number>({ ttlMs: 1000 });
    await expect(cache.getOrLoad('k', () => Promise.reject(new Error('upstream down')))).rejects.toThrow('upstream down');
    await expect(cache.getOrLoad('k', () => Promise.resolve(7))).resolves.toBe(7);
  });

  it("lets one caller stop waiting without cancelling the shared load for the others", async () => {
    const cache = new TtlCache<number>({ ttlMs: 1000 });
    let finish: (value: number) => void = () => {};
    const load = () => new Promise<number>((resolve) => (finish = resolve));
    const controller = new AbortController();
    const impatient = cache.getOrLoad('k', load, controller.signal);
    const patient = cache.getOrLoad('k', load);
    controller.abort(new Error('gave up'));
    await expect(impatient).rejects.toThrow('gave up');
    finish(5);
    await expect(patient).resolves.toBe(5);
    expect(cache.get('k')).toBe(5);
  });
});
