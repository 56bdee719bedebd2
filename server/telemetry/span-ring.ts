// A single-producer, single-consumer ring of text records in a SharedArrayBuffer: how ended spans
// cross from the main thread to the span export thread (export-thread.ts) without a postMessage
// per batch.
//
// Why not postMessage: in the running server a postMessage costs the sending thread far more than
// the same call in a loop (it wakes the receiver and serialises under the sender's lock), whatever
// it carries. Writing into shared memory wakes no thread: the export thread reads the ring on its
// own timer.
//
// Layout: a header of four Int32 counters, then `capacity` bytes of data (a power of two, so the
// counters can wrap around 2^32 and still index the data with a mask). The counters count bytes
// and records written and read since the start; only the producer stores the written ones, only
// the consumer the read ones, all through Atomics, so a record is complete before the consumer
// can see it. A record is a Uint32 byte length and the UTF-8 text, padded to 4 bytes; a record
// that does not fit before the end of the data starts again at offset 0, behind a SKIP marker. A
// record that does not fit in the free space is dropped (and counted), never waited for: the main
// thread must not block on a slow exporter, as the SDK's batch processor drops spans beyond its
// queue.

const WRITTEN = 0;
const READ = 1;
const RECORDS_WRITTEN = 2;
const RECORDS_READ = 3;
const HEADER_BYTES = 16;
const LENGTH_BYTES = 4;
/** Marks the unused end of the data area: the next record starts at offset 0. */
const SKIP = 0xffffffff;

const align4 = (n: number) => (n + 3) & ~3;

export class SpanRing {
  readonly buffer: SharedArrayBuffer;
  readonly #counters: Int32Array;
  readonly #bytes: Uint8Array;
  readonly #view: DataView;
  readonly #mask: number;
  readonly #capacity: number;
  readonly #encoder = new TextEncoder();
  readonly #decoder = new TextDecoder();
  /** Records this side could not write (producer only). */
  dropped = 0;

  /** A new ring of `capacity` bytes (a power of two, at least 64), or the view of an existing one. */
  constructor(capacityOrBuffer: number | SharedArrayBuffer) {
    if (typeof capacityOrBuffer === 'number') {
      const capacity = capacityOrBuffer;
      if (capacity < 64 || (capacity & (capacity - 1)) !== 0 || capacity > 2 ** 30) {
        throw new RangeError(`a span ring's capacity must be a power of two between 64 and 2^30 bytes, not ${capacity}`);
      }
      this.buffer = new SharedArrayBuffer(HEADER_BYTES + capacity);
    } else {
      this.buffer = capacityOrBuffer;
    }
    this.#capacity = this.buffer.byteLength - HEADER_BYTES;
    this.#mask = this.#capacity - 1;
    this.#counters = new Int32Array(this.buffer, 0, 4);
    this.#bytes = new Uint8Array(this.buffer, HEADER_BYTES);
    this.#view = new DataView(this.buffer, HEADER_BYTES);
  }

  /** Appends one record; false (and counted in `dropped`) when the ring has no room for it. */
  write(text: string): boolean {
    const written = Atomics.load(this.#counters, WRITTEN);
    const free = this.#capacity - ((written - Atomics.load(this.#counters, READ)) | 0);
    const offset = written & this.#mask;
    const tail = this.#capacity - offset;
    // First choice: right here, in the contiguous space before the end of the data area.
    const here = Math.min(tail, free) - LENGTH_BYTES;
    if (here > 0) {
      const length = this.#encodeAt(text, offset, here);
      if (length >= 0) return this.#publish(written, LENGTH_BYTES + align4(length));
    }
    // Else after a SKIP marker, from offset 0, if the space freed at the start is enough.
    const wrapped = free - tail - LENGTH_BYTES;
    if (wrapped > 0) {
      const length = this.#encodeAt(text, 0, wrapped);
      if (length >= 0) {
        this.#view.setUint32(offset, SKIP);
        return this.#publish(written, tail + LENGTH_BYTES + align4(length));
      }
    }
    this.dropped++;
    return false;
  }

  /** Records written and not yet read. */
  pending(): number {
    return (Atomics.load(this.#counters, RECORDS_WRITTEN) - Atomics.load(this.#counters, RECORDS_READ)) | 0;
  }

  /** Every record written since the last read, in order, and frees their space (consumer only). */
  read(): string[] {
    const out: string[] = [];
    let read = Atomics.load(this.#counters, READ);
    const written = Atomics.load(this.#counters, WRITTEN);
    while (read !== written) {
      const offset = read & this.#mask;
      const length = this.#view.getUint32(offset);
      if (length === SKIP) {
        read = (read + this.#capacity - offset) | 0;
        continue;
      }
      const start = offset + LENGTH_BYTES;
      // A copy out of shared memory first: the producer may reuse these bytes once `read` moves on.
      out.push(this.#decoder.decode(this.#bytes.slice(start, start + length)));
      read = (read + LENGTH_BYTES + align4(length)) | 0;
    }
    Atomics.store(this.#counters, READ, read);
    Atomics.store(this.#counters, RECORDS_READ, (Atomics.load(this.#counters, RECORDS_READ) + out.length) | 0);
    return out;
  }

  /** UTF-8 of `text` at `offset` after its length prefix, within `room` bytes; -1 if it does not fit. */
  #encodeAt(text: string, offset: number, room: number): number {
    const start = offset + LENGTH_BYTES;
    const { read, written } = this.#encoder.encodeInto(text, this.#bytes.subarray(start, start + room));
    if (read !== text.length) return -1;
    this.#view.setUint32(offset, written);
    return written;
  }

  #publish(written: number, bytes: number): true {
    // Bytes first: a consumer that sees the record counted (pending) finds its bytes there too.
    Atomics.store(this.#counters, WRITTEN, (written + bytes) | 0);
    Atomics.store(this.#counters, RECORDS_WRITTEN, (Atomics.load(this.#counters, RECORDS_WRITTEN) + 1) | 0);
    return true;
  }
}
