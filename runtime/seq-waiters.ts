// Requests waiting for this node to apply a seq (a read that carries X-Folio-Seq, see
// http/middleware/read-your-writes.ts). Only a node whose log grows by records from elsewhere keeps any: a standby
// (its group's log) or a cutover's follower; LedgerRuntime.appliedSeqReached answers a leader or a single
// node at once. Each wait settles:
//   applied      once the log reaches the seq (woken whenever the log takes a record);
//   beyond_log   when a read of the group's log that began after the request arrived found that log
//                ending before the seq (groupLogRead): the group has no such seq, so it never comes;
//   timed_out    when its time is up, when whoever asked went away (its AbortSignal), or when the node
//                stops serving this ledger (release).
// Waiters sit in a binary min-heap by seq that knows each waiter's place in it, so waking those applied
// and taking out one that timed out both cost O(log n), whatever the number waiting. Those that wait for
// a read of the group's log are also queued in arrival order and settled from the queue's head. At most
// `waitersMax` wait at once; past that a request is answered timed_out at once, so a flood of such reads
// costs bounded memory.

import type { SeqWait } from '../http/ports/ledger-core.js';

export const SEQ_WAITERS_MAX = 10_000;
/** Settled waiters the arrival queue may keep before it is compacted (their share must be half too). */
const ARRIVALS_SETTLED_MAX = 1_024;

/** What the heap needs of an item: its key, and a slot for its place (-1: not in the heap). */
export interface HeapItem {
  readonly seq: number;
  heapIndex: number;
}

/** A binary min-heap by seq whose items know their index, so any one can be removed in O(log n). */
export class SeqHeap<T extends HeapItem> {
  private readonly items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    item.heapIndex = this.items.length;
    this.items.push(item);
    this.up(item.heapIndex);
  }

  pop(): T | undefined {
    const top = this.items[0];
    if (top) this.remove(top);
    return top;
  }

  /** Takes `item` out, wherever it is; nothing when it is not in the heap. */
  remove(item: T): void {
    const at = item.heapIndex;
    if (at < 0 || this.items[at] !== item) return;
    item.heapIndex = -1;
    const last = this.items.pop() as T;
    if (last === item) return;
    this.items[at] = last;
    last.heapIndex = at;
    this.down(at);
    this.up(last.heapIndex);
  }

  private up(at: number): void {
    const item = this.items[at] as T;
    while (at > 0) {
      const parentAt = (at - 1) >> 1;
      const parent = this.items[parentAt] as T;
      if (parent.seq <= item.seq) break;
      this.place(parent, at);
      at = parentAt;
    }
    this.place(item, at);
  }

  private down(at: number): void {
    const item = this.items[at] as T;
    const count = this.items.length;
    for (;;) {
      const leftAt = 2 * at + 1;
      if (leftAt >= count) break;
      const rightAt = leftAt + 1;
      const left = this.items[leftAt] as T;
      const childAt = rightAt < count && (this.items[rightAt] as T).seq < left.seq ? rightAt : leftAt;
      const child = this.items[childAt] as T;
      if (item.seq <= child.seq) break;
      this.place(child, at);
      at = childAt;
    }
    this.place(item, at);
  }

  private place(item: T, at: number): void {
    this.items[at] = item;
    item.heapIndex = at;
  }
}

interface Waiter extends HeapItem {
  /** performance.now() when it began waiting. */
  readonly arrivedAt: number;
  settled: boolean;
  /** Still in the arrival queue (not passed by a read of the group's log yet). */
  queued: boolean;
  settle(wait: SeqWait): void;
}

const APPLIED: SeqWait = { outcome: 'applied' };

export class SeqWaiters {
  private readonly heap = new SeqHeap<Waiter>();
  /** Waiters in arrival order, for the next read of the group's log; settled ones are skipped. */
  private arrivals: Waiter[] = [];
  private arrivalsHead = 0;
  private arrivalsSettled = 0;

  constructor(
    private readonly appliedSeq: () => number,
    private readonly waitersMax = SEQ_WAITERS_MAX,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get waiting(): number {
    return this.heap.size;
  }

  /** Waits (at most `timeoutMs`) for the log to reach `seq`; `signal` ends the wait early (timed_out). */
  reached(seq: number, timeoutMs: number, signal?: AbortSignal): Promise<SeqWait> {
    if (this.appliedSeq() >= seq) return Promise.resolve(APPLIED);
    if (this.heap.size >= this.waitersMax || timeoutMs <= 0 || signal?.aborted) return Promise.resolve(this.outcome(seq));
    return new Promise((resolve) => {
      const onAbort = (): void => waiter.settle(this.outcome(seq));
      const waiter: Waiter = {
        seq,
        arrivedAt: this.now(),
        heapIndex: -1,
        settled: false,
        queued: true,
        settle: (wait) => {
          if (waiter.settled) return;
          waiter.settled = true;
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          this.heap.remove(waiter);
          if (waiter.queued) this.arrivalsSettled += 1;
          resolve(wait);
        },
      };
      const timer = setTimeout(onAbort, timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.heap.push(waiter);
      this.compactArrivals();
      this.arrivals.push(waiter);
    });
  }

  /** Wakes the waiters whose seq is applied now. */
  advanced(): void {
    const applied = this.appliedSeq();
    for (let top = this.heap.peek(); top && top.seq <= applied; top = this.heap.peek()) top.settle(APPLIED);
  }

  /**
   * A read of the group's log that began at `readStartedAt` (performance.now()) found it ending at
   * `endSeq`: every request that was waiting before that read for a seq past the end is answered
   * beyond_log (the seq was not in the group's log even after the request was sent).
   */
  groupLogRead(endSeq: number, readStartedAt: number): void {
    this.advanced();
    const logEndSeq = Math.max(endSeq, this.appliedSeq());
    while (this.arrivalsHead < this.arrivals.length) {
      const waiter = this.arrivals[this.arrivalsHead] as Waiter;
      if (waiter.arrivedAt > readStartedAt) break;
      this.arrivalsHead += 1;
      waiter.queued = false;
      if (waiter.settled) this.arrivalsSettled -= 1;
      else if (waiter.seq > logEndSeq) waiter.settle({ outcome: 'beyond_log', log_end_seq: logEndSeq });
    }
    this.compactArrivals();
  }

  /** Answers every waiter now (timed_out unless reached): the node stops serving this ledger. */
  release(): void {
    for (let top = this.heap.peek(); top; top = this.heap.peek()) top.settle(this.outcome(top.seq));
  }

  private outcome(seq: number): SeqWait {
    const applied = this.appliedSeq();
    return applied >= seq ? APPLIED : { outcome: 'timed_out', applied_seq: applied };
  }

  /**
   * Drops the head of the arrival queue already passed, and the settled waiters once they are many and
   * half of it: each waiter is copied a bounded number of times, so this costs O(1) per waiter.
   */
  private compactArrivals(): void {
    if (this.arrivalsHead === this.arrivals.length) {
      this.arrivals = [];
      this.arrivalsHead = 0;
      this.arrivalsSettled = 0;
      return;
    }
    if (this.arrivalsSettled > ARRIVALS_SETTLED_MAX && this.arrivalsSettled * 2 > this.arrivals.length - this.arrivalsHead) {
      this.arrivals = this.arrivals.slice(this.arrivalsHead).filter((waiter) => !waiter.settled);
      this.arrivalsHead = 0;
      this.arrivalsSettled = 0;
    }
  }
}
