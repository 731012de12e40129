// Delivers hooks from the log. The log is the outbox: deliveries are derived from durable events
// (hook-deliveries.ts), so they were committed in the same write as their transactions, and nothing a
// crash could undo is ever announced. This reads the log behind the writers, never on their path:
//   - a scan reads durable events after `scannedSeq`, follows hook registrations as they appear in the
//     log (a hook gets the changes logged after it was registered, while it was active), and queues a
//     delivery per change and matching hook;
//   - at most `deliveries_in_memory_max` deliveries are held at once (queued, in flight or waiting to
//     retry). At the limit the scan stops and resumes at half, so a slow or dead receiver costs bounded
//     memory while the backlog stays where it already is: in the log;
//   - requests go out through one p-queue of bounded concurrency, with got, each attempt bounded by the
//     hook's timeout, retried after 1 s, 2 s, 4 s ... (at most 60 s) up to the hook's retry_count;
//   - finished deliveries (delivered, given up, or dropped because the hook was since deleted or
//     deactivated) are noted, and once a second the notes and the cursor below which everything is
//     finished are saved in the outbox store, so a restart resumes from there and skips what was
//     recorded as finished.
// Deliveries may repeat after a crash and may arrive out of order; X-Event-ID identifies each one.
// Each registered hook's recent deliveries, with their status and attempts, are followed in a bounded
// history in memory (delivery-history.ts) for GET /hooks/:id/deliveries.
// The server's notification webhook (notifications.ts: Blnk's events, derived from the log) rides the
// same window, queue, retries and progress: its notifications are derived from the same events.

import { setMaxListeners } from 'node:events';
import PQueue from 'p-queue';
import type { LedgerEvent, LoggedEvent } from '../engine/events.js';
import type { HookRecord, HookType, TransactionRecord } from '../engine/records.js';
import { deliveryEventId, hookEventName, transactionChanges } from './hook-deliveries.js';
import { hookBody, hookHeaders, notificationBody, type DeliveryTarget } from './hook-payload.js';
import type { NotificationDeriver } from './notification-draft.js';
import { notificationEventId, notificationsIn, type Notification, type NotificationTarget } from './notifications.js';
import { urlRefusal, type TargetPolicy } from './hook-targets.js';
import { deliveryClient, type DeliveryClient } from './delivery-client.js';
import { HookSecretSealer, SealError } from './signing-secrets.js';
import type { HookOutboxStore } from './outbox-store.js';
import type { DeliveryEntry, DeliveryHistory } from './delivery-history.js';
import { backoffMs } from '../engine/backoff.js';

export interface HookDeliveryLimits {
  /** Delivery requests in flight at once, across all hooks. */
  concurrent_requests_max: number;
  /** Deliveries held in memory (queued, in flight, waiting to retry) before the scan pauses. */
  deliveries_in_memory_max: number;
  /** Log events read per scan turn, so a long backlog is read in slices between other work. */
  scan_events_per_turn_max: number;
  backoff_first_ms: number;
  backoff_max_ms: number;
  cursor_save_interval_ms: number;
}

export const DEFAULT_HOOK_DELIVERY_LIMITS: HookDeliveryLimits = {
  concurrent_requests_max: 32,
  deliveries_in_memory_max: 1_000,
  scan_events_per_turn_max: 5_000,
  backoff_first_ms: 1_000,
  backoff_max_ms: 60_000,
  cursor_save_interval_ms: 1_000,
};

/** Opened signing secrets kept; past it the cache starts over (hooks are few, rotations rarer). */
const OPENED_SECRETS_MAX = 1_000;

/** The part of the log the dispatcher reads. */
export interface DeliverySource {
  read(fromSeq: number, toSeq: number): Iterable<LoggedEvent>;
  readonly durableSeq: number;
}

export interface HookDispatcherLogger {
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export interface HookDispatcherOptions {
  source: DeliverySource;
  /** The hooks as registered now: a delivery whose hook is gone or inactive by its turn is dropped. */
  currentHooks: () => ReadonlyMap<string, HookRecord>;
  store: HookOutboxStore;
  /** Opens each hook's sealed signing secret. */
  sealer: HookSecretSealer;
  /** Which addresses deliveries may reach (hook-targets.ts). */
  targets: TargetPolicy;
  limits?: Partial<HookDeliveryLimits>;
  now?: () => number;
  logger?: HookDispatcherLogger;
  /** The server's notification webhook; without it no notification is derived. */
  notifications?: NotificationTarget;
  /** The kinds of notification derived (notifications.ts NOTIFICATION_DERIVERS unless a test says). */
  notificationDerivers?: readonly NotificationDeriver[];
  /**
   * Called when a registered hook's delivery is given up after its retries (the runtime records it as a
   * system error, which the notification webhook announces). Not called for the webhook's own deliveries:
   * announcing their failure through the webhook that failed could only fail again.
   */
  onGiveUp?: (failure: GivenUpDelivery) => void;
  /** Where registered hooks' deliveries are followed (it outlives a dispatcher stopped and started again). */
  history?: DeliveryHistory;
}

export interface GivenUpDelivery {
  hook_id: string;
  event_id: string;
  /** The delivery's event name (transaction.applied, ...) and transaction. */
  event: string;
  transaction_id: string;
  attempts: number;
  failure: string;
}

export interface DeliveryStats {
  delivered: number;
  failed: number;
  dropped: number;
  attempts: number;
}

/** One delivery: of a transaction change to a registered hook, or of a notification to the webhook. */
interface Delivery {
  seq: number;
  eventId: string;
  retries: number;
  body?: string;
  hook?: { hookId: string; type: HookType; record: TransactionRecord };
  notification?: Notification;
  /** Its entry in the history of its hook's deliveries. */
  entry?: DeliveryEntry;
}

/** Where an attempt goes and how it is signed and bounded. */
interface Endpoint {
  url: string;
  /** The signing key, opened when an attempt is made (a hook's sealed secret may fail to open). */
  secret: () => string;
  /** Absent for the notification webhook. */
  hookId?: string;
  /** The hook's id and type, or the webhook's configured headers (hook-payload.ts). */
  target: DeliveryTarget;
  timeoutSeconds: number;
  retryCount: number;
}

export class HookDispatcher {
  readonly stats: DeliveryStats = { delivered: 0, failed: 0, dropped: 0, attempts: 0 };
  private readonly limits: HookDeliveryLimits;
  private readonly queue: PQueue;
  private readonly client: DeliveryClient;
  /** Opened signing secrets by their sealed text (a rotation seals anew, so entries never go stale). */
  private readonly openedSecrets = new Map<string, string>();
  private readonly aborter = new AbortController();
  private readonly now: () => number;
  /** Deliveries not finished yet, counted per seq; Map order is seq order (seqs only ever grow). */
  private readonly openBySeq = new Map<number, number>();
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  /** Hook registrations as of `scannedSeq`, and as of each seq where they changed since the cursor. */
  private readonly registry: Map<string, HookRecord>;
  private snapshots: Array<{ seq: number; hooks: HookRecord[] }>;
  private scannedSeq: number;
  private savedLowSeq: number;
  private inMemory = 0;
  private scanScheduled = false;
  private saveTimer: NodeJS.Timeout | undefined;
  private saving: Promise<void> = Promise.resolve();
  private closed = false;
  private readFailed = false;
  /**
   * Set when the scan stopped at the in-memory limit; it resumes only once half the window is free, so
   * a full window is refilled in one read instead of one event (and one decoded record) per finish.
   */
  private windowFull = false;
  /** Deliveries finished since the last save, written with the next cursor. */
  private finishedNotes: Array<{ seq: number; eventId: string }> = [];
  /** Seqs at or below this may have deliveries finished before the last restart. */
  private readonly finishedHorizon: number;

  private constructor(private readonly options: HookDispatcherOptions, lowSeq: number, hooks: HookRecord[]) {
    this.limits = { ...DEFAULT_HOOK_DELIVERY_LIMITS, ...options.limits };
    this.queue = new PQueue({ concurrency: this.limits.concurrent_requests_max });
    this.client = deliveryClient(options.targets);
    // Every request in flight listens on the one abort signal; their number is bounded by the queue.
    setMaxListeners(this.limits.concurrent_requests_max + 16, this.aborter.signal);
    this.now = options.now ?? Date.now;
    this.scannedSeq = this.savedLowSeq = lowSeq;
    this.registry = new Map(hooks.map((hook) => [hook.hook_id, hook]));
    this.snapshots = [{ seq: lowSeq, hooks }];
    this.finishedHorizon = options.store.highestFinishedSeq();
  }

  /**
   * Opens delivery where the saved cursor left it. Without a cursor (a new data directory, or one
   * from before hooks were delivered) or with one past the end of the log (the log was replaced), it
   * starts at the end of the log with the hooks registered now: nothing before that was promised.
   */
  static async start(options: HookDispatcherOptions): Promise<HookDispatcher> {
    let cursor = options.store.readCursor();
    const end = options.source.durableSeq;
    if (!cursor || cursor.low_seq > end) {
      cursor = { low_seq: end, hooks: [...options.currentHooks().values()] };
      await options.store.reset(cursor);
    }
    const dispatcher = new HookDispatcher(options, cursor.low_seq, cursor.hooks);
    dispatcher.wake();
    return dispatcher;
  }

  /** Deliveries held in memory right now. */
  get pending(): number {
    return this.inMemory;
  }

  /** The seq below which every delivery is finished. */
  get lowSeq(): number {
    for (const seq of this.openBySeq.keys()) return seq - 1;
    return this.scannedSeq;
  }

  /** Called when the log has more durable events; cheap, and coalesced into one scan per turn. */
  wake(): void {
    if (this.scanScheduled || this.closed) return;
    this.scanScheduled = true;
    setImmediate(() => {
      this.scanScheduled = false;
      this.scan();
    });
  }

  private scan(): void {
    if (this.closed || this.readFailed || this.windowFull) return;
    const target = this.options.source.durableSeq;
    if (this.scannedSeq >= target) return;
    if (this.registry.size === 0 && this.options.currentHooks().size === 0 && !this.options.notifications) {
      // No hook is registered at this point of the log or now: nothing in between can be delivered
      // (a hook registered and deleted in between would have its deliveries dropped anyway).
      this.scannedSeq = target;
      this.cursorMoved();
      return;
    }
    let events = 0;
    try {
      for (const { seq, event } of this.options.source.read(this.scannedSeq + 1, target)) {
        this.followRegistrations(seq, event);
        this.derive(seq, event);
        this.scannedSeq = seq;
        events += 1;
        if (this.inMemory >= this.limits.deliveries_in_memory_max) {
          this.windowFull = true;
          break;
        }
        if (events >= this.limits.scan_events_per_turn_max) break;
      }
    } catch (error) {
      this.options.logger?.error({ err: error, seq: this.scannedSeq + 1 }, 'hook delivery cannot read the log; delivery stopped');
      this.readFailed = true;
      return;
    }
    this.cursorMoved();
    if (this.scannedSeq < target && !this.windowFull) this.wake();
  }

  private followRegistrations(seq: number, event: LedgerEvent): void {
    if (!event.hooks && !event.deleted_hooks) return;
    for (const hook of event.hooks ?? []) this.registry.set(hook.hook_id, hook);
    for (const hookId of event.deleted_hooks ?? []) this.registry.delete(hookId);
    this.snapshots.push({ seq, hooks: [...this.registry.values()] });
  }

  private derive(seq: number, event: LedgerEvent): void {
    if (this.options.notifications) {
      for (const notification of notificationsIn(event, this.options.notificationDerivers)) {
        this.open({ seq, eventId: notificationEventId(seq, notification), retries: 0, notification });
      }
    }
    if (this.registry.size === 0) return;
    for (const change of transactionChanges(event)) {
      for (const type of change.types) {
        for (const hook of this.registry.values()) {
          if (hook.type !== type || !hook.active) continue;
          const eventId = deliveryEventId(seq, change, hook.hook_id, type);
          this.open({ seq, eventId, retries: 0, hook: { hookId: hook.hook_id, type, record: change.record } });
        }
      }
    }
  }

  /** Holds a new delivery and queues it, unless it was finished before the last restart. */
  private open(delivery: Delivery): void {
    const { seq, eventId } = delivery;
    if (seq <= this.finishedHorizon && this.options.store.isFinished(seq, eventId)) return;
    this.openBySeq.set(seq, (this.openBySeq.get(seq) ?? 0) + 1);
    this.inMemory += 1;
    const hook = delivery.hook;
    if (hook && this.options.history) {
      delivery.entry = this.options.history.open(hook.hookId, {
        event_id: eventId, event: hookEventName(hook.record.status), transaction_id: hook.record.transaction_id, hook_type: hook.type, seq,
      });
    }
    this.enqueue(delivery);
  }

  /** Where a delivery goes now; undefined when its hook was deleted or deactivated since (it is dropped). */
  private endpoint(delivery: Delivery): Endpoint | undefined {
    if (delivery.notification) {
      const target = this.options.notifications;
      if (!target) return undefined;
      return { url: target.url, secret: () => target.secret, target: { headers: target.headers ?? {} }, timeoutSeconds: target.timeout_seconds, retryCount: target.retry_count };
    }
    const hook = this.options.currentHooks().get(delivery.hook?.hookId ?? '');
    if (!hook || !hook.active) return undefined;
    return {
      url: hook.url, secret: () => this.signingSecret(hook), hookId: hook.hook_id, target: { hookId: hook.hook_id, hookType: delivery.hook?.type },
      timeoutSeconds: hook.timeout, retryCount: hook.retry_count,
    };
  }

  private bodyOf(delivery: Delivery): string {
    if (delivery.notification) return notificationBody(delivery.notification.name, delivery.notification.data);
    const { record, type } = delivery.hook as NonNullable<Delivery['hook']>;
    return hookBody(record, type);
  }

  private enqueue(delivery: Delivery): void {
    this.queue.add(() => this.attempt(delivery)).catch((error: unknown) => {
      // A bug, not a receiver's failure: report it and let the delivery go rather than stop the process.
      this.options.logger?.error({ err: error, event_id: delivery.eventId }, 'hook delivery failed unexpectedly');
      if (!this.closed) {
        this.stats.failed += 1;
        if (delivery.entry) delivery.entry.status = 'failed';
        this.finish(delivery);
      }
    });
  }

  private async attempt(delivery: Delivery): Promise<void> {
    if (this.closed) return;
    const endpoint = this.endpoint(delivery);
    const entry = delivery.entry;
    if (!endpoint) {
      this.stats.dropped += 1;
      if (entry) entry.status = 'dropped';
      this.finish(delivery);
      return;
    }
    delivery.body ??= this.bodyOf(delivery);
    this.stats.attempts += 1;
    if (entry) {
      entry.attempts += 1;
      entry.last_attempt_at = this.now();
      entry.next_attempt_at = 0;
    }
    let failure: string | undefined;
    try {
      // Checked at each attempt: an address written in the URL never goes through the guarded lookup.
      const refusal = urlRefusal(endpoint.url, this.options.targets);
      if (refusal) throw Object.assign(new Error(refusal), { code: 'EHOOKTARGET' });
      const response = await this.client.request.post(endpoint.url, {
        body: delivery.body,
        headers: hookHeaders(endpoint.secret(), endpoint.target, delivery.eventId, delivery.body, this.now()),
        timeout: { request: Math.max(1, Math.round(endpoint.timeoutSeconds * 1000)) },
        signal: this.aborter.signal,
      });
      if (response.statusCode < 200 || response.statusCode > 299) failure = `status ${response.statusCode}`;
    } catch (error) {
      failure = error instanceof SealError ? error.message : (error as { code?: string }).code ?? (error as Error).message;
    }
    if (this.closed) return;
    if (entry) entry.last_failure = failure ?? '';
    if (failure === undefined) {
      this.stats.delivered += 1;
      if (entry) entry.status = 'delivered';
      this.finish(delivery);
    } else if (delivery.retries < endpoint.retryCount) {
      delivery.retries += 1;
      if (entry) {
        entry.status = 'retrying';
        entry.next_attempt_at = this.now() + this.backoffMs(delivery.retries);
      }
      this.retryLater(delivery);
    } else {
      this.stats.failed += 1;
      if (entry) entry.status = 'failed';
      this.options.logger?.warn(
        { hook_id: endpoint.hookId ?? 'notifications', event_id: delivery.eventId, seq: delivery.seq, attempts: delivery.retries + 1, failure },
        'hook delivery failed; giving up',
      );
      if (delivery.hook) {
        this.options.onGiveUp?.({
          hook_id: delivery.hook.hookId, event_id: delivery.eventId, event: hookEventName(delivery.hook.record.status),
          transaction_id: delivery.hook.record.transaction_id, attempts: delivery.retries + 1, failure,
        });
      }
      this.finish(delivery);
    }
  }

  /**
   * The key a hook's deliveries are signed with: its own secret, never the master key. A hook from
   * before hooks had secrets is given one at start-up (LedgerRuntime.startWork) before any delivery;
   * should one still have none, its deliveries fail rather than go out signed with something else.
   */
  private signingSecret(hook: HookRecord): string {
    const sealed = hook.signing_secret_sealed;
    if (sealed === undefined) throw new SealError(`hook ${hook.hook_id} has no signing secret of its own`);
    let secret = this.openedSecrets.get(sealed);
    if (secret === undefined) {
      secret = this.options.sealer.open(sealed);
      if (this.openedSecrets.size >= OPENED_SECRETS_MAX) this.openedSecrets.clear();
      this.openedSecrets.set(sealed, secret);
    }
    return secret;
  }

  /** Backoff doubles from the first delay for each retry, up to the cap. */
  backoffMs(retry: number): number {
    return backoffMs(this.limits.backoff_first_ms, this.limits.backoff_max_ms, retry);
  }

  private retryLater(delivery: Delivery): void {
    const timer = setTimeout(() => {
      this.retryTimers.delete(timer);
      this.enqueue(delivery);
    }, this.backoffMs(delivery.retries));
    this.retryTimers.add(timer);
  }

  private finish(delivery: Delivery): void {
    this.finishedNotes.push({ seq: delivery.seq, eventId: delivery.eventId });
    const open = (this.openBySeq.get(delivery.seq) ?? 1) - 1;
    if (open === 0) this.openBySeq.delete(delivery.seq);
    else this.openBySeq.set(delivery.seq, open);
    this.inMemory -= 1;
    this.cursorMoved();
    if (this.windowFull && this.inMemory <= this.limits.deliveries_in_memory_max / 2) {
      this.windowFull = false;
      this.wake();
    }
  }

  /** Schedules a save of the progress, at most one per interval, when there is anything to save. */
  private cursorMoved(): void {
    if (this.closed || this.saveTimer) return;
    if (this.lowSeq === this.savedLowSeq && this.finishedNotes.length === 0) return;
    // With no hooks at all, a stale cursor costs only a longer read at the next start: save rarely.
    const idle = this.registry.size === 0 && this.inMemory === 0 && this.finishedNotes.length === 0;
    this.saveTimer = setTimeout(() => {
      this.saveTimer = undefined;
      void this.saveCursor();
    }, this.limits.cursor_save_interval_ms * (idle ? 30 : 1));
    this.saveTimer.unref();
  }

  /** Saves the cursor and the finished notes; saves run one after another, never two at once. */
  private saveCursor(): Promise<void> {
    this.saving = this.saving.then(async () => {
      const lowSeq = this.lowSeq;
      if (lowSeq === this.savedLowSeq && this.finishedNotes.length === 0) return;
      const index = this.snapshots.findLastIndex((snapshot) => snapshot.seq <= lowSeq);
      const base = this.snapshots[index] as { seq: number; hooks: HookRecord[] };
      this.snapshots = this.snapshots.slice(index);
      const notes = this.finishedNotes;
      this.finishedNotes = [];
      await this.options.store.save({ low_seq: lowSeq, hooks: base.hooks }, notes);
      this.savedLowSeq = lowSeq;
    }).catch((error: unknown) => {
      this.options.logger?.error({ err: error }, 'cannot save hook delivery progress; deliveries may repeat after a restart');
    });
    return this.saving;
  }

  /** Waits until nothing is held (tests and benches); resolves at once when idle. */
  async idle(): Promise<void> {
    while (!this.closed && (this.inMemory > 0 || this.scannedSeq < this.options.source.durableSeq)) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /**
   * Stops delivering: requests in flight are abandoned (they count as not delivered and go out again
   * after the next start), and the cursor is saved as far as it got.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.saveTimer);
    this.saveTimer = undefined;
    for (const timer of this.retryTimers) clearTimeout(timer);
    this.retryTimers.clear();
    this.queue.clear();
    this.aborter.abort();
    this.client.close();
    await this.saveCursor();
    await this.options.store.close();
  }
}
