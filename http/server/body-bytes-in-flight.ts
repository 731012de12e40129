// The request-body bytes the whole process holds at once (server.body_bytes_in_flight_max). Every HTTP
// thread counts the bytes of the bodies it is reading, as they arrive and after inflation, in one
// SharedArrayBuffer handed to all of them (workers/http-workers.ts), so the cap is the process's whatever
// thread a connection lands on; a body that would take the count past the cap is refused (503, see
// json-body.ts) and gives back what it took. Bytes are given back when the request is done with, however
// it ends. Each thread also keeps its own count in a slot of the buffer: a worker that dies holding bytes
// cannot give them back itself, so the thread that replaces it gives back its slot first (releaseSlot).
//
// Layout: Int32Array [total, slot 0, slot 1, ...]. An Int32 holds up to 2 GiB; the cap is at most 1 GiB
// (BODY_BYTES_IN_FLIGHT_MAX_LIMIT), so the count cannot overflow while threads overshoot it for a moment.

/** The default cap: six 10 MiB bodies and more at once, far below a thread's heap limit (about 4 GiB). */
export const BODY_BYTES_IN_FLIGHT_MAX_DEFAULT = 128 * 1024 * 1024;
/** The largest cap a configuration may set. */
export const BODY_BYTES_IN_FLIGHT_MAX_LIMIT = 1024 * 1024 * 1024;

const TOTAL = 0;

export class BodyBytesInFlight {
  private readonly counts: Int32Array;

  /** `slot`: this thread's own count (0 for a process that serves HTTP on one thread). */
  constructor(readonly shared: SharedArrayBuffer, readonly max: number, private readonly slot = 0) {
    this.counts = new Int32Array(shared);
    if (!(slot >= 0 && slot + 1 < this.counts.length)) throw new RangeError(`no slot ${slot} in a count for ${this.counts.length - 1} threads`);
  }

  /** A count for `threads` HTTP threads, none holding anything. */
  static shared(threads: number): SharedArrayBuffer {
    return new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT * (1 + Math.max(1, threads)));
  }

  /** A count for one thread alone (HTTP on the engine's thread, tests). */
  static local(max: number): BodyBytesInFlight {
    return new BodyBytesInFlight(BodyBytesInFlight.shared(1), max, 0);
  }

  /** Gives back everything `slot` holds: its thread ended without doing so. */
  static releaseSlot(shared: SharedArrayBuffer, slot: number): void {
    const counts = new Int32Array(shared);
    const held = Atomics.exchange(counts, slot + 1, 0);
    if (held !== 0) Atomics.sub(counts, TOTAL, held);
  }

  /** Counts `bytes` more if the process stays within the cap; false (and nothing counted) if it would not. */
  take(bytes: number): boolean {
    if (Atomics.add(this.counts, TOTAL, bytes) + bytes > this.max) {
      Atomics.sub(this.counts, TOTAL, bytes);
      return false;
    }
    Atomics.add(this.counts, this.slot + 1, bytes);
    return true;
  }

  release(bytes: number): void {
    if (bytes === 0) return;
    Atomics.sub(this.counts, this.slot + 1, bytes);
    Atomics.sub(this.counts, TOTAL, bytes);
  }

  /** Whether `bytes` more would fit right now (a declared length, before anything is read). */
  fits(bytes: number): boolean {
    return Atomics.load(this.counts, TOTAL) + bytes <= this.max;
  }

  /** What the process holds now. */
  get held(): number {
    return Atomics.load(this.counts, TOTAL);
  }
}
