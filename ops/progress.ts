// Progress for long operator commands (verify, restore). On a terminal: one line redrawn in place with
// a bar, the count and the rate, at most ten times a second. Anywhere else (a pipe, a log file, CI):
// plain lines, one per tenth of the way or every five seconds, whichever comes first, so logs stay
// readable and still show that work is moving.

const REDRAW_MS = 100;
const PLAIN_INTERVAL_MS = 5_000;
const BAR_WIDTH = 30;

export interface ProgressStream {
  isTTY?: boolean;
  write(text: string): unknown;
}

export class Progress {
  private readonly started = performance.now();
  private lastDrawn = 0;
  private lastTenth = -1;
  private lastDone = 0;
  private lastTotal = 0;

  constructor(private readonly stream: ProgressStream, private readonly label: string, private readonly unit = 'events') {}

  update(done: number, total: number): void {
    this.lastDone = done;
    this.lastTotal = total;
    const now = performance.now();
    if (this.stream.isTTY) {
      if (now - this.lastDrawn < REDRAW_MS) return;
      this.lastDrawn = now;
      this.stream.write('\r' + this.line(done, total, now) + '\u001b[K');
      return;
    }
    const tenth = total > 0 ? Math.floor((done / total) * 10) : -1;
    if (tenth === this.lastTenth && now - this.lastDrawn < PLAIN_INTERVAL_MS) return;
    this.lastTenth = tenth;
    this.lastDrawn = now;
    this.stream.write(this.line(done, total, now) + '\n');
  }

  /** Draws the final state (on a terminal, ending the line so what follows starts on a fresh one). */
  done(done = this.lastDone, total = this.lastTotal): void {
    const now = performance.now();
    if (this.stream.isTTY) this.stream.write('\r' + this.line(done, total, now) + '\u001b[K\n');
    else if (this.lastTenth !== 10 || done !== this.lastDone) this.stream.write(this.line(done, total, now) + '\n');
  }

  private line(done: number, total: number, now: number): string {
    const seconds = Math.max((now - this.started) / 1000, 0.001);
    const rate = Math.round(done / seconds).toLocaleString('en-US');
    const count = total > 0 ? `${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')}` : done.toLocaleString('en-US');
    if (total <= 0) return `${this.label}: ${count} ${this.unit} (${rate}/s)`;
    const fraction = Math.min(1, done / total);
    const filled = Math.round(fraction * BAR_WIDTH);
    const bar = '#'.repeat(filled) + '-'.repeat(BAR_WIDTH - filled);
    const percent = (fraction * 100).toFixed(1).padStart(5);
    return `${this.label} [${bar}] ${percent}% ${count} ${this.unit} (${rate}/s)`;
  }
}
