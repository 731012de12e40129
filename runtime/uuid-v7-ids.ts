// Ids `<prefix>_<uuid>` with RFC 9562 version-7 UUIDs: a millisecond timestamp, then a 12-bit counter
// that keeps ids from one process strictly increasing within a millisecond, then 62 random bits. Ids
// therefore sort in creation order, which keeps LMDB inserts at the end of their B-trees.

import { randomFillSync } from 'node:crypto';
import type { Clock, IdPrefix, IdSource } from '../engine/ports.js';

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));
/** The version-and-counter group for every counter value: `7000` to `7fff`. */
const COUNTER_GROUPS = Array.from({ length: 0x1000 }, (_, counter) => (0x7000 | counter).toString(16));
const POOL_BYTES = 8192;
const COUNTER_MAX = 0xfff;

export class UuidV7Ids implements IdSource {
  private pool = Buffer.alloc(POOL_BYTES);
  private poolOffset = POOL_BYTES;
  private lastMs = 0;
  private counter = 0;
  /** The timestamp groups of `prefixMs`, formatted once per millisecond rather than once per id. */
  private prefix = '';
  private prefixMs = -1;

  constructor(private readonly clock: Clock) {}

  next(prefix: IdPrefix): string {
    return `${prefix}_${this.uuid()}`;
  }

  uuid(): string {
    const now = this.clock.now();
    if (now > this.lastMs) {
      this.lastMs = now;
      this.counter = this.randomByte() << 3; // start low in the range so a burst has room to count up
    } else if (this.counter < COUNTER_MAX) {
      this.counter += 1;
    } else {
      this.lastMs += 1; // counter exhausted: borrow the next millisecond rather than repeat an id
      this.counter = 0;
    }
    if (this.prefixMs !== this.lastMs) {
      const high = Math.floor(this.lastMs / 0x10000);
      const low = this.lastMs % 0x10000;
      this.prefix = high.toString(16).padStart(8, '0') + '-' + low.toString(16).padStart(4, '0') + '-';
      this.prefixMs = this.lastMs;
    }
    const bytes = this.randomBytes(8);
    return (
      this.prefix + COUNTER_GROUPS[this.counter] + '-' +
      HEX[0x80 | ((bytes[0] as number) & 0x3f)] + HEX[bytes[1] as number] + '-' +
      HEX[bytes[2] as number] + HEX[bytes[3] as number] + HEX[bytes[4] as number] +
      HEX[bytes[5] as number] + HEX[bytes[6] as number] + HEX[bytes[7] as number]
    );
  }

  private randomByte(): number {
    return this.randomBytes(1)[0] as number;
  }

  private randomBytes(count: number): Buffer {
    if (this.poolOffset + count > POOL_BYTES) {
      randomFillSync(this.pool);
      this.poolOffset = 0;
    }
    const slice = this.pool.subarray(this.poolOffset, this.poolOffset + count);
    this.poolOffset += count;
    return slice;
  }
}
