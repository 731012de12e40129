// The recent deliveries of each hook, as the dispatcher carries them out: what an operator (or the
// console) looks at when a receiver says it missed something. Kept in memory only, since the server
// started: the durable truth is the log (every delivery is derived from it again after a restart) and
// the outbox's cursor. Bounded twice: the newest DELIVERIES_PER_HOOK_MAX deliveries of a hook, and
// HOOKS_TRACKED_MAX hooks (the one that delivered least recently is forgotten first). An entry is one
// object the dispatcher updates in place as its attempts go (a push and a few field writes per attempt,
// on the delivery path only, never on a request's); readers get copies. A delivery derived again (the
// dispatcher was stopped and started, as a fence does, before it finished) keeps its one entry and the
// attempts it already made.

import type { HookType } from '../engine/records.js';

export const DELIVERIES_PER_HOOK_MAX = 100;
export const HOOKS_TRACKED_MAX = 1_000;

/** pending: queued, not tried yet; retrying: failed, tried again at next_attempt_at; the rest are final. */
export type DeliveryStatus = 'pending' | 'retrying' | 'delivered' | 'failed' | 'dropped';

export interface DeliveryEntry {
  event_id: string;
  /** transaction.applied, transaction.inflight, ... */
  event: string;
  transaction_id: string;
  hook_type: HookType;
  /** The log seq of the change delivered. */
  seq: number;
  status: DeliveryStatus;
  /** Attempts made so far (the first one and its retries). */
  attempts: number;
  /** Epoch ms; 0 before the first attempt. */
  last_attempt_at: number;
  /** Epoch ms of the next attempt while retrying; 0 otherwise. */
  next_attempt_at: number;
  /** Why the last attempt failed (`status 500`, `ETIMEDOUT`, ...); empty when it did not. */
  last_failure: string;
}

export class DeliveryHistory {
  /** Per hook, oldest first; Map order is the order hooks last had a delivery opened. */
  private readonly byHook = new Map<string, DeliveryEntry[]>();
  /** When this history began (the deliveries before it are not known to it). */
  readonly since: number;

  constructor(now: number) {
    this.since = now;
  }

  /** Starts following a delivery; the caller updates the entry as it goes. */
  open(hookId: string, fields: Pick<DeliveryEntry, 'event_id' | 'event' | 'transaction_id' | 'hook_type' | 'seq'>): DeliveryEntry {
    let entries = this.byHook.get(hookId);
    const again = entries?.findIndex((known) => known.event_id === fields.event_id) ?? -1;
    const entry: DeliveryEntry = again >= 0
      ? { ...(entries?.splice(again, 1)[0] as DeliveryEntry), status: 'pending', next_attempt_at: 0 }
      : { ...fields, status: 'pending', attempts: 0, last_attempt_at: 0, next_attempt_at: 0, last_failure: '' };
    if (entries) this.byHook.delete(hookId);
    else {
      entries = [];
      if (this.byHook.size >= HOOKS_TRACKED_MAX) {
        for (const oldest of this.byHook.keys()) {
          this.byHook.delete(oldest);
          break;
        }
      }
    }
    this.byHook.set(hookId, entries);
    entries.push(entry);
    if (entries.length > DELIVERIES_PER_HOOK_MAX) entries.splice(0, entries.length - DELIVERIES_PER_HOOK_MAX);
    return entry;
  }

  /** A hook's recent deliveries, newest first, at most `limit`, as copies. */
  recent(hookId: string, limit = DELIVERIES_PER_HOOK_MAX): DeliveryEntry[] {
    const entries = this.byHook.get(hookId) ?? [];
    const found: DeliveryEntry[] = [];
    for (let index = entries.length - 1; index >= 0 && found.length < limit; index -= 1) found.push({ ...(entries[index] as DeliveryEntry) });
    return found;
  }
}
