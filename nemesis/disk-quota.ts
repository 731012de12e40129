// Size-capped data disks for the nemesis's nodes: each node's data directory lives on an ext4 file
// system of its own, made in a sparse image file and loop-mounted (root, mkfs.ext4 and mount are needed;
// `available()` says whether this machine allows it). A disk is "filled" by a ballast file taking every
// free block (fallocate), so the node's next write of its log, index or snapshots fails with ENOSPC, as
// on a real full disk, and freed by deleting the ballast. The images and mount points live in a temp
// dir of their own (not bench/resources.ts's, which would try to delete a mounted directory); they are
// unmounted and removed by `release()`, or on the way out however the run ends.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The image's size: sparse, so only what is written takes room on the real disk. */
const IMAGE_BYTES = 2 * 1024 ** 3;
/** Ballasts tried before fill() settles for what it got. */
const BALLAST_TRIES_MAX = 8;
/** Free bytes the ballast leaves: less than any write of the log, index or snapshots needs. */
const BALLAST_LEAVES_BYTES = 16 * 1024;

const mounted = new Set<DiskQuota>();
let exitHookInstalled = false;

function run(command: string, args: string[]): void {
  execFileSync(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
}

/** A node's data disk as the nemesis fills and frees it. */
export interface FullDisk {
  /** Fills it: the node's next write of its log fails; says how. */
  fill(): string;
  /** Frees what fill() took. */
  free(): void;
  /** Gives back whatever the disk holds on this machine. */
  release(): void;
}

export class DiskQuota implements FullDisk {
  private ballast = 0;

  private constructor(readonly root: string, readonly mountPoint: string, private readonly image: string) {}

  /** Whether size-capped disks can be made here (root, loop devices, mkfs.ext4): tries one. */
  static available(): boolean {
    if (process.platform !== 'linux' || process.getuid?.() !== 0) return false;
    let quota: DiskQuota | undefined;
    try {
      quota = DiskQuota.make('probe', 64 * 1024 ** 2);
      return true;
    } catch {
      return false;
    } finally {
      quota?.release();
    }
  }

  /** A new size-capped file system, mounted; `dataDir` is a directory on it. */
  static make(label: string, bytes = IMAGE_BYTES): DiskQuota {
    installExitHook();
    const root = fs.mkdtempSync(path.join(os.tmpdir(), `folio-nemesis-disk-${label}-`));
    const image = path.join(root, 'disk.img');
    const mountPoint = path.join(root, 'mnt');
    fs.mkdirSync(mountPoint);
    try {
      fs.writeFileSync(image, '');
      fs.truncateSync(image, bytes);
      // -m 0: no blocks reserved for root (the node runs as root here and would use them).
      run('mkfs.ext4', ['-q', '-F', '-m', '0', '-E', 'lazy_itable_init=1,lazy_journal_init=1', image]);
      run('mount', ['-o', 'loop', image, mountPoint]);
    } catch (error) {
      fs.rmSync(root, { recursive: true, force: true });
      throw error;
    }
    const quota = new DiskQuota(root, mountPoint, image);
    mounted.add(quota);
    return quota;
  }

  get dataDir(): string {
    return path.join(this.mountPoint, 'data');
  }

  /**
   * Takes every free block but a few: the next real write fails. A ballast as large as statfs says is
   * free can itself fail (its own extent blocks, blocks a delete has not yet given back): then smaller
   * ones fill what is left. Says how many bytes are left free.
   */
  fill(): string {
    for (let tries = 0; tries < BALLAST_TRIES_MAX; tries += 1) {
      const left = this.freeBytes();
      if (left <= BALLAST_LEAVES_BYTES * 2) break;
      let bytes = left - BALLAST_LEAVES_BYTES;
      for (; bytes > BALLAST_LEAVES_BYTES; bytes = Math.floor(bytes / 2)) {
        this.ballast += 1;
        try {
          run('fallocate', ['-l', String(bytes), path.join(this.mountPoint, `ballast-${this.ballast}`)]);
          break;
        } catch {
          fs.rmSync(path.join(this.mountPoint, `ballast-${this.ballast}`), { force: true });
        }
      }
    }
    return `the disk was filled to ${this.freeBytes()} bytes free`;
  }

  private freeBytes(): number {
    const stats = fs.statfsSync(this.mountPoint);
    return Number(stats.bavail) * Number(stats.bsize);
  }

  /** Frees what fill() took. */
  free(): void {
    for (const name of fs.readdirSync(this.mountPoint)) {
      if (name.startsWith('ballast-')) fs.rmSync(path.join(this.mountPoint, name), { force: true });
    }
  }

  /** Unmounts and deletes the image (a busy mount is detached lazily). */
  release(): void {
    if (!mounted.delete(this)) return;
    try {
      run('umount', [this.mountPoint]);
    } catch {
      try {
        run('umount', ['-l', this.mountPoint]);
      } catch {
        // not mounted any more
      }
    }
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const quota of [...mounted]) quota.release();
  });
}

/**
 * A full disk where size-capped ones cannot be made (no root or no loop devices): the node runs with
 * FOLIO_TEST_DISK_FULL_FILE naming `file`, and its log's writes fail with ENOSPC while the file exists
 * (wal/injected-disk-full.ts). Only the log sees it, not the index or snapshots: the write that matters.
 */
export class InjectedFullDisk implements FullDisk {
  constructor(readonly file: string) {}

  fill(): string {
    fs.writeFileSync(this.file, '');
    return "the node's log writes fail with ENOSPC (injected: no size-capped disks on this machine)";
  }

  free(): void {
    fs.rmSync(this.file, { force: true });
  }

  release(): void {
    this.free();
  }
}
