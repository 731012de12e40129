// What the readers of the balance history need to know without asking another thread, in memory the
// process's threads share (a SharedArrayBuffer handed to each):
//   checkpoint      the last log seq the history store has committed (the follower's thread writes it
//                   after each commit and wakes whoever waits on it)
//   wanted          the highest seq a reader is waiting for the store to reach (readers raise it and wake
//                   the follower, which otherwise gathers records for a few milliseconds per commit)
//   backdated       the newest log seq of an event that carried a transaction with an effective date
//                   (a posting dated before its event can only come from one), or BACKDATED_PENDING while
//                   such an event is applied but its record not yet sealed; the engine's thread writes it
//                   (runtime/ledger-runtime.ts) before any other thread can learn of that event's seq
// A reader that knows seq V is visible, and finds `backdated` at or below the store's checkpoint C, knows
// that no event in (C, V] dated a posting back: for a moment before C's event time, the store's answer
// as of C is the answer as of V (history-reader.ts).

/** `backdated` while a back-dated event is applied and its seq not yet known: above every seq. */
const BACKDATED_PENDING = BigInt(Number.MAX_SAFE_INTEGER);
const CHECKPOINT_SLOT = 0;
const BACKDATED_SLOT = 1;
const WANTED_SLOT = 2;
const SLOTS = 3;

/** Atomics.waitAsync (Node 24; the compiled lib here predates it). */
type WaitAsync = (array: BigInt64Array, index: number, value: bigint, timeoutMs: number) => { async: boolean; value: Promise<string> | string };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

export class HistoryProgress {
  private readonly slots: BigInt64Array;

  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(SLOTS * BigInt64Array.BYTES_PER_ELEMENT)) {
    this.slots = new BigInt64Array(buffer);
  }

  get checkpoint(): number {
    return Number(Atomics.load(this.slots, CHECKPOINT_SLOT));
  }

  /** The follower committed up to `seq` (or started over: a lower seq). */
  published(seq: number): void {
    Atomics.store(this.slots, CHECKPOINT_SLOT, BigInt(seq));
    Atomics.notify(this.slots, CHECKPOINT_SLOT);
  }

  /** The newest seq that may hold a back-dated posting (see the header). */
  get backdated(): number {
    return Number(Atomics.load(this.slots, BACKDATED_SLOT));
  }

  /** An event with a back-dated posting is being applied; its seq follows at the seal (backdatedUpTo). */
  backdatedPending(): void {
    Atomics.store(this.slots, BACKDATED_SLOT, BACKDATED_PENDING);
  }

  /** Every event up to `seq` is sealed, and the newest that may be back-dated is at or below it. */
  backdatedUpTo(seq: number): void {
    Atomics.store(this.slots, BACKDATED_SLOT, BigInt(seq));
  }

  /** Resolves once the checkpoint differs from `seq`, or after `timeoutMs`: whichever comes first. */
  async changedFrom(seq: number, timeoutMs: number): Promise<void> {
    await this.waitWhile(CHECKPOINT_SLOT, seq, timeoutMs);
  }

  /** The highest seq a reader waits for the store to reach. */
  get wanted(): number {
    return Number(Atomics.load(this.slots, WANTED_SLOT));
  }

  /** A reader waits for the store to reach `seq`: the follower is woken to apply what it holds now. */
  want(seq: number): void {
    for (;;) {
      const current = Atomics.load(this.slots, WANTED_SLOT);
      if (current >= BigInt(seq)) return;
      if (Atomics.compareExchange(this.slots, WANTED_SLOT, current, BigInt(seq)) === current) break;
    }
    Atomics.notify(this.slots, WANTED_SLOT);
  }

  /** The follower starts (again): nothing is wanted of it yet. */
  wantedNothing(): void {
    Atomics.store(this.slots, WANTED_SLOT, 0n);
  }

  /** Resolves once `wanted` differs from `seq`, or after `timeoutMs`. */
  async wantedChangedFrom(seq: number, timeoutMs: number): Promise<void> {
    await this.waitWhile(WANTED_SLOT, seq, timeoutMs);
  }

  private async waitWhile(slot: number, value: number, timeoutMs: number): Promise<void> {
    if (timeoutMs <= 0) return;
    const waited = waitAsync(this.slots, slot, BigInt(value), timeoutMs);
    if (waited.async) await waited.value;
  }
}
