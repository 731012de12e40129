// How many password checks run at once. A check is scrypt (32 MiB and tens of milliseconds of CPU, on
// libuv's thread pool), and anyone can ask for one by posting a sign-in form: at most
// password_checks_running_max run at a time, at most password_checks_waiting_max wait in line for a turn,
// and a check beyond those is not started at all (the route answers 503 with Retry-After). So however
// many sign-ins arrive, the cloud spends a bounded share of its CPU and memory on them.

import { CLOUD_LIMITS } from './cloud-config.js';

export class PasswordCheckGate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly runningMax: number = CLOUD_LIMITS.password_checks_running_max,
    private readonly waitingMax: number = CLOUD_LIMITS.password_checks_waiting_max,
  ) {}

  /** Runs `check` when a turn is free; undefined, decided at once, when the line is full. */
  tryRun<T>(check: () => Promise<T>): Promise<T> | undefined {
    if (this.running < this.runningMax) {
      this.running += 1;
      return this.runNow(check);
    }
    if (this.waiting.length >= this.waitingMax) return undefined;
    return new Promise<void>((resolve) => this.waiting.push(resolve)).then(() => this.runNow(check));
  }

  private async runNow<T>(check: () => Promise<T>): Promise<T> {
    try {
      return await check();
    } finally {
      const next = this.waiting.shift();
      if (next) next(); // the turn passes on: running stays the same
      else this.running -= 1;
    }
  }
}
