// Ids `<prefix>_<uuid>` with RFC 9562 version-7 UUIDs: a millisecond timestamp, then a 12-bit counter
// that keeps ids from one process strictly increasing within a millisecond, then 62 random bits. Ids
// therefore sort in creation order, which keeps LMDB inserts at the end of their B-trees.

import { randomFillSync } from 'node:crypto';
import type { Clock, IdPrefix, IdSource } from '../engine/ports.js';

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));
const POOL_BYTES = 8192;
const COUNTER_MAX = 0xfff;

export class UuidV7Ids implements IdSource {
  private pool = Buffer.alloc(POOL_BYTES);
  private poolOffset = POOL_BYTES;
  private lastMs = 0;
  private counter = 0;

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
    const ms = this.lastMs;
    const high = Math.floor(ms / 0x10000);
    const low = ms % 0x10000;
    const bytes = this.randomBytes(8);
    const hex = (value: number, width: number): string => value.toString(16).padStart(width, '0');
    return (
      hex(high, 8) + '-' + hex(low, 4) + '-' + hex(0x7000 | this.counter, 4) + '-' +
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
