// A core kept running: started (CoreProcess), health-checked every health_interval_ms, and restarted
// when it dies or stops answering three checks in a row, after a backoff that doubles from
// restart_backoff_first_ms (at most restart_backoff_max_ms). More than restarts_max restarts within
// restart_window_ms and it is given up: `failed` is set and the deployment reports it. A core under
// cutover as a follower is not restarted (the cutover fails instead); stop() ends supervision first.
// The proxy reaches the core through `agent` (keep-alive connections) while `url` is set, with the API
// keys each start checks or makes (proxy-keys.ts); a follower takes them from the file as they are.

import http from 'node:http';
import { CLOUD_LIMITS } from './cloud-config.js';
import { CoreClient } from './core-client.js';
import { CoreProcess, type CoreLaunch, type CoreLogger } from './core-process.js';
import { ensureProxyKeys, readProxyKeys, type ProxyKeyKind, type ProxyKeys } from './proxy-keys.js';
import { backoffMs } from '../engine/backoff.js';

const HEALTH_FAILURES_MAX = 3;

export type CoreState = 'starting' | 'running' | 'restarting' | 'failed' | 'stopped';

export class SupervisedCore {
  readonly agent = new http.Agent({ keepAlive: true, maxSockets: 128, maxFreeSockets: 128, scheduling: 'lifo' });
  private process: CoreProcess | undefined;
  private _state: CoreState = 'starting';
  private healthTimer: NodeJS.Timeout | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private healthFailures = 0;
  private restarts: number[] = [];
  private restartAllowed: boolean;
  private _version = '';
  private lastProblem = '';
  private parsedAddress: { hostname: string; port: number; host: string } | undefined;
  private keys: ProxyKeys | undefined;

  constructor(
    private launch: CoreLaunch,
    readonly label: string,
    private readonly logger: CoreLogger,
    /** Where the proxy's API keys for this core are kept (proxy-keys.ts). */
    private readonly proxyKeysFile: string,
    private readonly onChange: (core: SupervisedCore) => void = () => undefined,
  ) {
    this.restartAllowed = launch.followDataDir === undefined;
  }

  get state(): CoreState {
    return this._state;
  }

  /** The address while the core runs. */
  get url(): string | undefined {
    return this._state === 'running' ? this.process?.url : undefined;
  }

  /** The address in the pieces the proxy's requests need, while the core runs. */
  get address(): { hostname: string; port: number; host: string } | undefined {
    return this._state === 'running' ? this.parsedAddress : undefined;
  }

  get pid(): number | undefined {
    return this.process?.pid;
  }

  /** The API key the proxy sends in place of the caller's credentials, while the core runs. */
  proxyKey(kind: ProxyKeyKind): string | undefined {
    return this._state === 'running' ? this.keys?.[kind].key : undefined;
  }

  get version(): string {
    return this._version;
  }

  get problem(): string {
    return this.lastProblem;
  }

  client(timeoutMs: number = CLOUD_LIMITS.core_request_timeout_ms): CoreClient {
    const url = this.process?.url;
    if (!url) throw new Error(`core ${this.label} is not running`);
    return new CoreClient(url, this.launch.secretKey, timeoutMs);
  }

  /** Starts the core and resolves once it answers /health; rejects if it cannot (the process is gone then). */
  async start(): Promise<void> {
    this._state = 'starting';
    const started = await CoreProcess.start(this.launch, { timeoutMs: CLOUD_LIMITS.core_start_timeout_ms, label: this.label, logger: this.logger });
    this.process = started;
    try {
      const health = await new CoreClient(started.url, this.launch.secretKey, CLOUD_LIMITS.health_timeout_ms).health();
      this._version = health.version;
      const client = new CoreClient(started.url, this.launch.secretKey, CLOUD_LIMITS.core_request_timeout_ms);
      // A follower appends nothing of its own: it has the keys its leader made, through the log.
      this.keys = this.launch.followDataDir === undefined ? await ensureProxyKeys(client, this.proxyKeysFile, Date.now()) : readProxyKeys(this.proxyKeysFile);
    } catch (error) {
      await started.kill();
      throw error;
    }
    const { hostname, port, host } = new URL(started.url);
    this.parsedAddress = { hostname, port: Number(port), host };
    void started.exited.then((how) => this.exitedOnItsOwn(started, how));
    this._state = 'running';
    this.healthFailures = 0;
    this.scheduleHealthCheck();
    this.onChange(this);
  }

  /** From a follower to an ordinary core: restarts (if it dies) run it on its own data, following nobody. */
  promoted(): void {
    this.launch = { ...this.launch, followDataDir: undefined };
    this.restartAllowed = true;
    this.keys = readProxyKeys(this.proxyKeysFile);
  }

  /** Ends the process now; supervision starts a fresh one (which is, for one, never fenced). */
  async restartNow(): Promise<void> {
    await this.process?.kill();
  }

  async stop(): Promise<void> {
    this._state = 'stopped';
    clearTimeout(this.healthTimer);
    clearTimeout(this.restartTimer);
    const running = this.process;
    if (running) await running.stop(CLOUD_LIMITS.core_stop_grace_ms);
    this.agent.destroy();
  }

  private scheduleHealthCheck(): void {
    clearTimeout(this.healthTimer);
    this.healthTimer = setTimeout(() => void this.checkHealth(), CLOUD_LIMITS.health_interval_ms);
    this.healthTimer.unref();
  }

  private async checkHealth(): Promise<void> {
    const running = this.process;
    if (this._state !== 'running' || !running) return;
    try {
      await new CoreClient(running.url, this.launch.secretKey, CLOUD_LIMITS.health_timeout_ms).health();
      this.healthFailures = 0;
    } catch (error) {
      this.healthFailures += 1;
      this.logger.warn({ core: this.label, failures: this.healthFailures, err: (error as Error).message }, 'core health check failed');
      if (this.healthFailures >= HEALTH_FAILURES_MAX) {
        void running.kill(); // its exit handler restarts it
        return;
      }
    }
    if (this._state === 'running' && this.process === running) this.scheduleHealthCheck();
  }

  private exitedOnItsOwn(which: CoreProcess, how: number | string): void {
    if (this.process !== which || this._state === 'stopped') return;
    clearTimeout(this.healthTimer);
    this.lastProblem = `exited with ${how}; ${which.stderrTail().split('\n').slice(-3).join(' / ')}`;
    this.logger.warn({ core: this.label, exit: how }, 'core exited on its own');
    if (!this.restartAllowed) {
      this._state = 'failed';
      this.onChange(this);
      return;
    }
    const now = Date.now();
    this.restarts = this.restarts.filter((at) => now - at < CLOUD_LIMITS.restart_window_ms);
    if (this.restarts.length >= CLOUD_LIMITS.restarts_max) {
      this._state = 'failed';
      this.logger.warn({ core: this.label }, `core died ${this.restarts.length + 1} times within the window; giving up`);
      this.onChange(this);
      return;
    }
    const delay = backoffMs(CLOUD_LIMITS.restart_backoff_first_ms, CLOUD_LIMITS.restart_backoff_max_ms, this.restarts.length + 1);
    this.restarts.push(now);
    this._state = 'restarting';
    this.onChange(this);
    this.restartTimer = setTimeout(() => void this.restart(), delay);
  }

  private async restart(): Promise<void> {
    if (this._state !== 'restarting') return;
    try {
      await this.start();
    } catch (error) {
      this.lastProblem = (error as Error).message;
      this.logger.warn({ core: this.label, err: this.lastProblem }, 'core restart failed');
      this.exitedOnItsOwn(this.process as CoreProcess, 'start failed');
    }
  }
}
