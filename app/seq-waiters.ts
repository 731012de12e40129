// Requests waiting for this node to apply a seq (a read that carries X-Folio-Seq, see
// http/read-your-writes.ts): each resolves true once the seq is applied, or false when its time is up.
// Woken whenever the log takes a record. At most `waiters_max` wait at once; past that a request is
// answered false at once rather than parked, so a flood of such reads costs bounded memory.

export const SEQ_WAITERS_MAX = 10_000;

interface Waiter {
  seq: number;
  done: (reached: boolean) => void;
}

export class SeqWaiters {
  private waiters: Waiter[] = [];

  constructor(private readonly appliedSeq: () => number, private readonly waitersMax = SEQ_WAITERS_MAX) {}

  reached(seq: number, timeoutMs: number): Promise<boolean> {
    if (this.appliedSeq() >= seq) return Promise.resolve(true);
    if (this.waiters.length >= this.waitersMax || timeoutMs <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        seq,
        done: (reached) => {
          clearTimeout(timer);
          resolve(reached);
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((other) => other !== waiter);
        resolve(this.appliedSeq() >= seq);
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  /** Wakes the waiters whose seq is applied now. */
  advanced(): void {
    if (this.waiters.length === 0) return;
    const applied = this.appliedSeq();
    const waiting: Waiter[] = [];
    for (const waiter of this.waiters) {
      if (waiter.seq <= applied) waiter.done(true);
      else waiting.push(waiter);
    }
    this.waiters = waiting;
  }

  /** Answers every waiter now (false unless reached): the node is closing. */
  release(): void {
    const applied = this.appliedSeq();
    for (const waiter of this.waiters.splice(0)) waiter.done(waiter.seq <= applied);
  }
}
