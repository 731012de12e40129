// Open connections per client address, counted for the whole process: with HTTP worker threads
// (workers/http-workers.ts) every worker's server counts into the same table, a SharedArrayBuffer handed to
// each, so an address's cap holds however the kernel spreads its connections over the workers
// (SO_REUSEPORT spreads them by a hash of the addresses and ports, not evenly per client: a share per
// worker would let one client through where its connections happen to bunch, and refuse it elsewhere
// below its cap). Also kept here: how many connections were refused, at the per-address cap and at
// connections_max, for /metrics.
//
// An address's key is its IPv4 address, or its IPv6 /64 (address-key.ts). The table is open addressing
// with linear probing over Int32 cells: a header [lock, refused per address, refused at connections_max],
// then entries of [family, high, low, count], empty where count is 0. An entry whose count falls to 0 is
// taken out by shifting the entries after it back (no tombstones), so addresses of connections long gone
// take no room. There are slots for twice connections_max addresses, more than can have a connection open
// at once. A lock (a cell taken with compareExchange, waited on with Atomics.wait) guards each change: a
// short probe, taken when a connection opens and when it closes, never across an await.

import { isIP } from 'node:net';
import { plainAddress, prefix64Groups } from './address-key.js';

/** Where a client's address falls in the table. */
export interface AddressSlotKey {
  family: 4 | 6;
  high: number;
  low: number;
}

const LOCK = 0;
const REFUSED_PER_ADDRESS = 1;
const REFUSED_CONNECTIONS_MAX = 2;
const HEADER_CELLS = 4;
const ENTRY_CELLS = 4;
const FAMILY = 0;
const HIGH = 1;
const LOW = 2;
const COUNT = 3;
/** A thread waiting for the lock looks again at least this often (a holder never sleeps with it). */
const LOCK_WAIT_MS = 1;

export class AddressConnections {
  private readonly cells: Int32Array;
  private readonly mask: number;

  private constructor(readonly buffer: SharedArrayBuffer) {
    this.cells = new Int32Array(buffer);
    const slots = (this.cells.length - HEADER_CELLS) / ENTRY_CELLS;
    if (!Number.isInteger(slots) || slots < 2 || (slots & (slots - 1)) !== 0) throw new Error('an address table has a power of two slots');
    this.mask = slots - 1;
  }

  /** A new table with room for the addresses of `connectionsMax` open connections. */
  static create(connectionsMax: number): AddressConnections {
    let slots = 2;
    while (slots < 2 * connectionsMax) slots *= 2;
    return new AddressConnections(new SharedArrayBuffer((HEADER_CELLS + slots * ENTRY_CELLS) * Int32Array.BYTES_PER_ELEMENT));
  }

  /** The table another thread created. */
  static over(buffer: SharedArrayBuffer): AddressConnections {
    return new AddressConnections(buffer);
  }

  /** The key of a peer address, or undefined when it is not an IP address (the socket is already gone). */
  static keyOf(address: string): AddressSlotKey | undefined {
    const plain = plainAddress(address);
    const family = isIP(plain);
    if (family === 4) {
      const [a = 0, b = 0, c = 0, d = 0] = plain.split('.').map(Number);
      return { family: 4, high: 0, low: ((a << 24) | (b << 16) | (c << 8) | d) | 0 };
    }
    if (family === 6) {
      const [g0 = 0, g1 = 0, g2 = 0, g3 = 0] = prefix64Groups(plain);
      return { family: 6, high: ((g0 << 16) | g1) | 0, low: ((g2 << 16) | g3) | 0 };
    }
    return undefined;
  }

  /** Counts a connection from `key` if it has fewer than `max` open; false (and a refusal counted) if not. */
  open(key: AddressSlotKey, max: number): boolean {
    this.lock();
    try {
      const at = this.find(key);
      if (at.found) {
        const count = this.cells[at.cell + COUNT] as number;
        if (count >= max) {
          Atomics.add(this.cells, REFUSED_PER_ADDRESS, 1);
          return false;
        }
        this.cells[at.cell + COUNT] = count + 1;
        return true;
      }
      // Every open connection has an entry, and there are slots for twice as many: a full table is a bug.
      if (at.cell < 0) throw new Error('the address table is full: more addresses than connections_max have connections open');
      this.cells[at.cell + FAMILY] = key.family;
      this.cells[at.cell + HIGH] = key.high;
      this.cells[at.cell + LOW] = key.low;
      this.cells[at.cell + COUNT] = 1;
      return true;
    } finally {
      this.unlock();
    }
  }

  /** A connection `open` counted has closed. */
  close(key: AddressSlotKey): void {
    this.lock();
    try {
      const at = this.find(key);
      if (!at.found) throw new Error('a connection closed that the address table never counted');
      const count = (this.cells[at.cell + COUNT] as number) - 1;
      if (count > 0) this.cells[at.cell + COUNT] = count;
      else this.remove(at.cell);
    } finally {
      this.unlock();
    }
  }

  /** Open connections counted from `key` (for tests and diagnostics). */
  openFrom(key: AddressSlotKey): number {
    this.lock();
    try {
      const at = this.find(key);
      return at.found ? (this.cells[at.cell + COUNT] as number) : 0;
    } finally {
      this.unlock();
    }
  }

  /** A connection beyond connections_max was closed as it was accepted. */
  countDropped(): void {
    Atomics.add(this.cells, REFUSED_CONNECTIONS_MAX, 1);
  }

  /** Connections refused since the table was made, by which cap refused them. */
  refusals(): { per_address: number; connections_max: number } {
    return { per_address: Atomics.load(this.cells, REFUSED_PER_ADDRESS), connections_max: Atomics.load(this.cells, REFUSED_CONNECTIONS_MAX) };
  }

  /** The entry's first cell, found; or the empty slot it would take (-1 when there is none). */
  private find(key: AddressSlotKey): { found: boolean; cell: number } {
    let slot = this.home(key.family, key.high, key.low);
    for (let probed = 0; probed <= this.mask; probed += 1) {
      const cell = HEADER_CELLS + slot * ENTRY_CELLS;
      if (this.cells[cell + COUNT] === 0) return { found: false, cell };
      if (this.cells[cell + FAMILY] === key.family && this.cells[cell + HIGH] === key.high && this.cells[cell + LOW] === key.low) return { found: true, cell };
      slot = (slot + 1) & this.mask;
    }
    return { found: false, cell: -1 };
  }

  /** Empties the entry at `cell`, moving back each later entry of its run that would no longer be found. */
  private remove(cell: number): void {
    let hole = (cell - HEADER_CELLS) / ENTRY_CELLS;
    let slot = hole;
    for (;;) {
      slot = (slot + 1) & this.mask;
      const at = HEADER_CELLS + slot * ENTRY_CELLS;
      if (this.cells[at + COUNT] === 0) break;
      const home = this.home(this.cells[at + FAMILY] as number, this.cells[at + HIGH] as number, this.cells[at + LOW] as number);
      // The entry stays where it is when its home lies cyclically after the hole, up to its slot.
      const stays = hole <= slot ? home > hole && home <= slot : home > hole || home <= slot;
      if (stays) continue;
      const to = HEADER_CELLS + hole * ENTRY_CELLS;
      for (let offset = 0; offset < ENTRY_CELLS; offset += 1) this.cells[to + offset] = this.cells[at + offset] as number;
      hole = slot;
    }
    const emptied = HEADER_CELLS + hole * ENTRY_CELLS;
    for (let offset = 0; offset < ENTRY_CELLS; offset += 1) this.cells[emptied + offset] = 0;
  }

  private home(family: number, high: number, low: number): number {
    let hash = Math.imul(high ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(low ^ family, 0xc2b2ae35);
    hash ^= hash >>> 16;
    hash = Math.imul(hash, 0x7feb352d);
    hash ^= hash >>> 15;
    return hash & this.mask;
  }

  private lock(): void {
    while (Atomics.compareExchange(this.cells, LOCK, 0, 1) !== 0) Atomics.wait(this.cells, LOCK, 1, LOCK_WAIT_MS);
  }

  private unlock(): void {
    Atomics.store(this.cells, LOCK, 0);
    Atomics.notify(this.cells, LOCK, 1);
  }
}
