// Timers as data: when holds expire or commit themselves and when scheduled transactions fall due. A
// binary min-heap by due time (then insertion order, so equal times fire in the order they were set).
// Entries are never removed early: when one comes up, the engine checks that the transaction is still
// in the state the timer was set for, which makes cancelling free.

export type TimerKind = 'expire' | 'auto_commit' | 'scheduled';

export interface Timer {
  at: number;
  transactionId: string;
  kind: TimerKind;
  order: number;
}

export class TimerSchedule {
  private readonly heap: Timer[] = [];
  private counter = 0;

  get size(): number {
    return this.heap.length;
  }

  add(at: number, transactionId: string, kind: TimerKind): void {
    this.heap.push({ at, transactionId, kind, order: (this.counter += 1) });
    this.siftUp(this.heap.length - 1);
  }

  /** Time of the earliest timer, if any. */
  nextAt(): number | undefined {
    return this.heap[0]?.at;
  }

  /** Every timer set and not yet fired, in no particular order (snapshots hash the live ones). */
  *entries(): IterableIterator<Readonly<Timer>> {
    yield* this.heap;
  }

  /** Removes and returns the earliest timer if it is due at `now`. */
  popDue(now: number): Timer | undefined {
    const first = this.heap[0];
    if (!first || first.at > now) return undefined;
    const last = this.heap.pop() as Timer;
    if (this.heap.length > 0) {
      this.heap[0] = last;
      this.siftDown(0);
    }
    return first;
  }

  private before(a: Timer, b: Timer): boolean {
    return a.at < b.at || (a.at === b.at && a.order < b.order);
  }

  private siftUp(index: number): void {
    let child = index;
    while (child > 0) {
      const parent = (child - 1) >> 1;
      if (!this.before(this.heap[child] as Timer, this.heap[parent] as Timer)) return;
      this.swap(child, parent);
      child = parent;
    }
  }

  private siftDown(index: number): void {
    let parent = index;
    for (;;) {
      const left = parent * 2 + 1;
      const right = left + 1;
      let smallest = parent;
      if (left < this.heap.length && this.before(this.heap[left] as Timer, this.heap[smallest] as Timer)) smallest = left;
      if (right < this.heap.length && this.before(this.heap[right] as Timer, this.heap[smallest] as Timer)) smallest = right;
      if (smallest === parent) return;
      this.swap(parent, smallest);
      parent = smallest;
    }
  }

  private swap(a: number, b: number): void {
    const item = this.heap[a] as Timer;
    this.heap[a] = this.heap[b] as Timer;
    this.heap[b] = item;
  }
}
