// The span ring (server/telemetry/span-ring.ts): the shared memory through which ended spans cross
// to the export thread. Guarantees: records come out whole, in order and byte for byte (UTF-8
// beyond ASCII, empty ones), across any number of laps of the ring and across the wrap of its
// 32-bit counters; a record that does not fit is refused whole and counted, and the ring takes
// records again once read; and a consumer in another thread, reading while this one writes, gets
// every record written (or counted as dropped) in order, none torn.
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { SpanRing } from '../../server/telemetry/span-ring.ts';

describe('span ring', () => {
  it('hands over records whole and in order, UTF-8 and empty ones included', () => {
    const ring = new SpanRing(1024);
    const records = ['{"name":"tools/call get_prices"}', '', 'ünïcødé ✓ 🚀', 'x'.repeat(500)];
    for (const r of records) expect(ring.write(r)).toBe(true);
    expect(ring.pending()).toBe(4);
    expect(ring.read()).toEqual(records);
    expect(ring.pending()).toBe(0);
    expect(ring.read()).toEqual([]);
  });

  it('keeps records intact over many laps, including those that restart at the front', () => {
    const ring = new SpanRing(256);
    const pending: string[] = [];
    let handedOver = 0;
    // Lengths that do not divide the capacity, so records regularly meet the end of the data area
    // and restart at offset 0 behind a SKIP marker; 1 to 3 records between reads.
    for (let lap = 0; lap < 500; lap++) {
      for (let i = 0; i <= lap % 3; i++) {
        const text = `record ${lap}.${i} ${'é'.repeat(lap % 17)}`;
        expect(ring.write(text)).toBe(true);
        pending.push(text);
      }
      const out = ring.read();
      expect(out).toEqual(pending.splice(0, out.length));
      handedOver += out.length;
    }
    expect(pending).toEqual([]);
    expect(handedOver).toBe(999); // 500 laps of 1, 2, 3, 1, ... records
    expect(ring.dropped).toBe(0);
  });

  it('works across the wrap of its 32-bit counters', () => {
    const ring = new SpanRing(128);
    // The byte counters just below 2^31, as after 2 GiB of spans, and the record counters too.
    const counters = new Int32Array(ring.buffer, 0, 4);
    counters.fill(2 ** 31 - 40);
    const out: string[] = [];
    for (let i = 0; i < 50; i++) {
      expect(ring.write(`span ${i}`)).toBe(true);
      expect(ring.write(`span ${i}b`)).toBe(true);
      expect(ring.pending()).toBe(2);
      out.push(...ring.read());
    }
    expect(out).toEqual(Array.from({ length: 50 }, (_, i) => [`span ${i}`, `span ${i}b`]).flat());
    expect(counters[0]).toBeLessThan(0); // the counters did wrap
    expect(counters[2]).toBeLessThan(0);
  });

  it('refuses a record that does not fit, whole, counts it, and takes records again once read', () => {
    const ring = new SpanRing(64);
    expect(ring.write('a'.repeat(20))).toBe(true); // 24 bytes with its length
    expect(ring.write('b'.repeat(20))).toBe(true); // 48
    expect(ring.write('c'.repeat(20))).toBe(false); // 72 > 64
    expect(ring.write('d'.repeat(61))).toBe(false); // never fits
    expect(ring.dropped).toBe(2);
    expect(ring.pending()).toBe(2); // the refused ones are not waiting
    expect(ring.read()).toEqual(['a'.repeat(20), 'b'.repeat(20)]);
    expect(ring.write('c'.repeat(20))).toBe(true);
    expect(ring.read()).toEqual(['c'.repeat(20)]);
  });

  it('takes only power-of-two capacities', () => {
    expect(() => new SpanRing(1000)).toThrow(RangeError);
    expect(() => new SpanRing(32)).toThrow(RangeError);
  });

  it('delivers to a consumer thread reading concurrently every record written or dropped, in order, none torn', async () => {
    const ring = new SpanRing(64 * 1024);
    // The consumer checks each record against its number and reports what it saw.
    const worker = new Worker(
      `
      const { parentPort, workerData } = require('node:worker_threads');
      const { SpanRing } = require(workerData.module);
      const ring = new SpanRing(workerData.buffer);
      let received = 0, last = -1, bad = 0;
      const drain = () => {
        for (const text of ring.read()) {
          const record = JSON.parse(text);
          if (record.n <= last || record.pad !== 'ü'.repeat(record.n % 50)) bad++;
          last = record.n;
          received++;
        }
      };
      const timer = setInterval(drain, 1);
      parentPort.postMessage('ready');
      parentPort.on('message', () => { clearInterval(timer); drain(); parentPort.postMessage({ received, last, bad }); });
      `,
      { eval: true, workerData: { buffer: ring.buffer, module: fileURLToPath(new URL('../../server/telemetry/span-ring.ts', import.meta.url)) } },
    );
    try {
      await new Promise((resolve) => worker.once('message', resolve));
      const total = 50_000;
      let written = 0;
      for (let n = 0; n < total; n++) {
        if (ring.write(JSON.stringify({ n, pad: 'ü'.repeat(n % 50) }))) written++;
        // Let the consumer run now and then, as the server's event loop does between requests.
        if (n % 100 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
      }
      const report = await new Promise<{ received: number; last: number; bad: number }>((resolve) => {
        worker.once('message', resolve);
        worker.postMessage('done');
      });
      expect(report.bad).toBe(0);
      expect(report.received).toBe(written);
      expect(written + ring.dropped).toBe(total);
      expect(written).toBeGreaterThan(total / 2);
    } finally {
      await worker.terminate();
    }
  });
});
