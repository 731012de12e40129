// Where the projector's thread keeps durable records it was handed but has no room for in memory
// (pushed-records.ts): a file it writes and reads with plain calls instead of holding the bytes in its
// heap or reading them back from the log. Both of those count in the process's resident memory: held
// records are anonymous memory, and log pages read through LMDB's map stay mapped (with a million
// events created faster than the index projects them, 435 MiB of RSS). Written and read pages of this
// file are the kernel's page cache only, never mapped, so they are not resident memory of the process
// and the kernel reclaims them when it needs to.
//
// One file per index file (the live index and a rebuild each have theirs, spillFileFor), created or
// emptied when first written, emptied whenever everything spilled has been read, and removed when the
// projector stops. A projector thread that died left its file behind: the next one empties it when it
// first spills (a crashed process's too), and removeIndexFiles removes it with the index. Anything that
// goes wrong with it (a full disk, say) turns it off: the records it would have held are read from the
// log, as before it existed.

import fs from 'node:fs';

/** Bytes the spill may hold at once; past this, records are left to be read from the log. */
export const SPILLED_BYTES_MAX = 2 * 1024 ** 3;

export const SPILL_SUFFIX = '-spill';

/** The spill file of the projector writing the index file `file`. */
export function spillFileFor(file: string): string {
  return `${file}${SPILL_SUFFIX}`;
}

export class RecordSpill {
  private fd: number | undefined;
  private end = 0;
  private failed = false;

  constructor(private readonly file: string, private readonly bytesMax = SPILLED_BYTES_MAX) {}

  /** Writes `bytes` at the end; where they start, or undefined when the spill is full or has failed. */
  append(bytes: Buffer): number | undefined {
    if (this.failed || this.end + bytes.length > this.bytesMax) return undefined;
    try {
      if (this.fd === undefined) this.fd = fs.openSync(this.file, 'w+', 0o600);
      let written = 0;
      while (written < bytes.length) written += fs.writeSync(this.fd, bytes, written, bytes.length - written, this.end + written);
    } catch {
      this.fail();
      return undefined;
    }
    const offset = this.end;
    this.end += bytes.length;
    return offset;
  }

  /** The `length` bytes written at `offset`, or undefined if they cannot be read back. */
  read(offset: number, length: number): Buffer | undefined {
    if (this.fd === undefined || this.failed || offset + length > this.end) return undefined;
    const bytes = Buffer.allocUnsafe(length);
    try {
      let read = 0;
      while (read < length) {
        const count = fs.readSync(this.fd, bytes, read, length - read, offset + read);
        if (count === 0) throw new Error('the spill file ended early');
        read += count;
      }
    } catch {
      this.fail();
      return undefined;
    }
    return bytes;
  }

  /** Everything written has been read: the file is emptied, and written from its start again. */
  empty(): void {
    if (this.fd === undefined || this.end === 0) return;
    try {
      fs.ftruncateSync(this.fd, 0);
      this.end = 0;
    } catch {
      this.fail();
    }
  }

  /** Bytes written and not yet emptied. */
  get bytes(): number {
    return this.end;
  }

  /** Closes and removes the file. */
  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
    this.end = 0;
    fs.rmSync(this.file, { force: true });
  }

  private fail(): void {
    this.failed = true;
    try {
      this.close();
    } catch {
      // already gone
    }
  }
}
