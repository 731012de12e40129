// How often a password may be tried: per account (the e-mail address, known or not) and per client
// address (client-address.ts), across every sign-in page. Each keeps a count of attempts that failed;
// after the free ones (sign_in_account_failures_free, sign_in_address_failures_free) every further
// failure starts a backoff that doubles from sign_in_backoff_first_ms up to sign_in_backoff_max_ms,
// during which the account or address is refused without its password being checked (so a right
// password is refused too, and a guess teaches nothing). The cap means nobody is locked out for good;
// an account or address with no failure for sign_in_failures_forget_ms starts from nothing, and a
// right password clears its account.
//
// An attempt counts as failed when it is admitted, before its password is checked, and is taken back
// if the password was right: attempts sent all at once cannot all pass the check before the first fails.
//
// Each table holds at most sign_in_throttle_entries_max entries, so a flood of made-up addresses and
// accounts cannot grow it. Room is made from the oldest end, and never by forgetting an entry that is
// under backoff or past its free failures while one that is not can go: a flood of single failures
// cannot push a guessed account out to reset its count.

import { CLOUD_LIMITS } from './cloud-config.js';
import { sha256Hex } from './secrets.js';
import { backoffMs } from '../engine/backoff.js';

interface Failures {
  count: number;
  blockedUntil: number;
  lastAt: number;
}

/** Entries looked at from the oldest end when room must be made. */
const EVICTION_SCAN_MAX = 64;

export class FailureTable {
  private readonly entries = new Map<string, Failures>();

  constructor(private readonly failuresFree: number, private readonly entriesMax: number) {}

  get size(): number {
    return this.entries.size;
  }

  /** Milliseconds until `key` may try again; 0 when it may now. */
  waitMs(key: string, now: number): number {
    const entry = this.live(key, now);
    return entry ? Math.max(0, entry.blockedUntil - now) : 0;
  }

  failed(key: string, now: number): void {
    let entry = this.live(key, now);
    if (entry) this.entries.delete(key); // re-inserted below: the table stays ordered by last failure
    else {
      this.makeRoom(now);
      entry = { count: 0, blockedUntil: 0, lastAt: now };
    }
    entry.count += 1;
    entry.lastAt = now;
    const beyond = entry.count - this.failuresFree;
    if (beyond > 0) {
      const backoff = backoffMs(CLOUD_LIMITS.sign_in_backoff_first_ms, CLOUD_LIMITS.sign_in_backoff_max_ms, beyond);
      entry.blockedUntil = Math.max(entry.blockedUntil, now + backoff);
    }
    this.entries.set(key, entry);
  }

  /** Takes one failure back (an attempt counted up front that turned out right). */
  takeBack(key: string): void {
    const entry = this.entries.get(key);
    if (entry && entry.count > 0) entry.count -= 1;
  }

  forget(key: string): void {
    this.entries.delete(key);
  }

  private live(key: string, now: number): Failures | undefined {
    const entry = this.entries.get(key);
    if (entry && this.forgotten(entry, now)) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  private forgotten(entry: Failures, now: number): boolean {
    return now >= entry.blockedUntil && now - entry.lastAt >= CLOUD_LIMITS.sign_in_failures_forget_ms;
  }

  private makeRoom(now: number): void {
    if (this.entries.size < this.entriesMax) return;
    let victim: string | undefined;
    let victimCount = Infinity;
    let scanned = 0;
    for (const [key, entry] of this.entries) {
      if (this.forgotten(entry, now) || (entry.count < this.failuresFree && entry.blockedUntil <= now)) {
        victim = key;
        break;
      }
      if (entry.count < victimCount) {
        victim = key;
        victimCount = entry.count;
      }
      scanned += 1;
      if (scanned >= EVICTION_SCAN_MAX) break;
    }
    if (victim !== undefined) this.entries.delete(victim);
  }
}

export class SignInThrottle {
  readonly accounts = new FailureTable(CLOUD_LIMITS.sign_in_account_failures_free, CLOUD_LIMITS.sign_in_throttle_entries_max);
  readonly addresses = new FailureTable(CLOUD_LIMITS.sign_in_address_failures_free, CLOUD_LIMITS.sign_in_throttle_entries_max);

  constructor(private readonly now: () => number) {}

  /** Whole seconds until this account may be tried from this address; 0 when it may be now. */
  waitSeconds(email: string, address: string): number {
    const now = this.now();
    const waitMs = Math.max(this.accounts.waitMs(accountKey(email), now), this.addresses.waitMs(address, now));
    return Math.ceil(waitMs / 1000);
  }

  /** Counts an attempt as failed, before its password is checked. */
  attempted(email: string, address: string): void {
    const now = this.now();
    this.accounts.failed(accountKey(email), now);
    this.addresses.failed(address, now);
  }

  /** The password was right: the account starts from nothing, and the address's attempt is taken back. */
  succeeded(email: string, address: string): void {
    this.accounts.forget(accountKey(email));
    this.addresses.takeBack(address);
  }
}

/** Accounts are counted under a digest of the address as it is looked up: bounded in size, whatever was sent. */
function accountKey(email: string): string {
  return sha256Hex(email.toLowerCase());
}
