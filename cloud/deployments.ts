// Managed deployments: each one a real Folio core (supervised-core.ts) with its own data directory
// under `<cloud data dir>/instances/<instance_id>` and secrets of its own in `<cloud data dir>/secrets`
// (mode 0600 in a 0700 directory, never logged or returned): its master key (`<secret_id>.key`), its
// tokenization secret (`<secret_id>.tokenization.key`, made at the first start of a deployment that has
// none) and the proxy's API keys for it (`<secret_id>.proxy-keys.json`, proxy-keys.ts). A deployment has a
// deployment_id and, distinct from it, the instance_id the proxy addresses. Statuses: PENDING (its core
// is starting) -> ACTIVE; ACTIVE -> UPGRADING -> RETIRED when an upgrade moves it to a new deployment
// (upgrade.ts); FAILED when its core cannot be kept running or its upgrade was abandoned before it
// started. At start-up the control plane starts the core of every PENDING or ACTIVE deployment, and
// finishes what a crash interrupted: an UPGRADING deployment is ACTIVE again, and the new deployment
// of that upgrade (never switched to) is FAILED. A deployment's `rate_limit` (fair use: the proxy's bucket,
// deployment-buckets.ts) is set when it is created, else the control plane's default; an upgrade keeps it.

import fs from 'node:fs';
import path from 'node:path';
import type { CloudStore, StoreChange } from './cloud-store.js';
import type { CoreLogger } from './core-process.js';
import { proxyKeysFile } from './proxy-keys.js';
import { newId, newSecret, newTokenizationSecret } from './secrets.js';
import { SupervisedCore } from './supervised-core.js';
import { WriteGate } from './write-gate.js';
import type { ApiKeyRateLimit } from '../engine/records.js';

export type DeploymentStatus = 'PENDING' | 'ACTIVE' | 'UPGRADING' | 'RETIRED' | 'FAILED';

export interface CutoverReport {
  seq: number;
  log_checksum: string;
  state_hash: string;
  /** When the write gate closed (epoch ms), and for how long: until it opened on the new core. */
  paused_at: number;
  write_pause_ms: number;
  /** Where the pause went: writes in flight finishing, fence, hashes compared, promotion, checks and switch. */
  pause_phases_ms: Record<'drain' | 'fence' | 'verify' | 'promote' | 'switch', number>;
  /** From the upgrade request to the switch (copy, follower start, catch-up, cutover). */
  total_ms: number;
  /** Where the cores' time went inside the pause (fence, the two hashes, promotion). */
  core_timings_ms: Record<string, Record<string, number>>;
}

export interface DeploymentRecord {
  deployment_id: string;
  instance_id: string;
  name: string;
  ingress_mode: string;
  dedicated: boolean;
  tier: string;
  type: string;
  region: string;
  status: DeploymentStatus;
  watch_enabled: boolean;
  usage_billing_enabled: boolean;
  usage_billing_enabled_at: number | null;
  record_creates_blocked: boolean;
  created_at: number;
  updated_at: number;
  /** The core version it runs (its /health), once it has run. */
  version: string;
  /** The user whose access tokens may reach it; null: the cloud API key only. */
  user_id: string | null;
  secret_id: string;
  /** Relative to the cloud data directory. */
  data_dir: string;
  replaces: string | null;
  replaced_by: string | null;
  /** Why it is FAILED, when it is. */
  problem: string | null;
  cutover: CutoverReport | null;
  /** Its own request rate through the proxy; absent or null: the control plane's default (none unless set). */
  rate_limit?: ApiKeyRateLimit | null;
}

/** A deployment's core as the proxy reaches it, by instance_id. */
export interface LiveInstance {
  deploymentId: string;
  instanceId: string;
  core: SupervisedCore;
  gate: WriteGate;
  /** Set when a cutover moved the ledger on: writes held across the switch go there. */
  successor?: LiveInstance;
}

export interface NewDeployment {
  name: string;
  region?: string;
  tier?: string;
  user_id?: string | null;
  rate_limit?: ApiKeyRateLimit;
}

const ZERO_TIME = '0001-01-01T00:00:00Z';

/** How the control plane runs every core: the same for all of them, from its own configuration. */
export interface CoreSettings {
  logLevel: string;
  /** Hooks may deliver to loopback and private addresses (FOLIO_CLOUD_CORE_HOOKS_ALLOW_PRIVATE_NETWORKS). */
  hooksAllowPrivateNetworks: boolean;
  /** The rate of deployments created without one (FOLIO_CLOUD_DEPLOYMENT_REQUESTS_PER_SECOND_DEFAULT); absent: none. */
  rateLimitDefault?: ApiKeyRateLimit;
}

export class Deployments {
  private readonly records = new Map<string, DeploymentRecord>();
  private readonly live = new Map<string, LiveInstance>();
  private readonly starting = new Set<Promise<void>>();

  constructor(
    private readonly store: CloudStore,
    readonly dataDir: string,
    private readonly logger: CoreLogger,
    private readonly now: () => number,
    private readonly coreSettings: CoreSettings,
  ) {
    for (const record of store.all<DeploymentRecord>('deployment')) this.records.set(record.deployment_id, record);
  }

  /** The rate through the proxy of deployments created without one; undefined: none. */
  get rateLimitDefault(): ApiKeyRateLimit | undefined {
    return this.coreSettings.rateLimitDefault;
  }

  /** A deployment's rate through the proxy: its own, else the default; undefined: unlimited. */
  rateLimitOf(record: DeploymentRecord): ApiKeyRateLimit | undefined {
    return record.rate_limit ?? this.coreSettings.rateLimitDefault;
  }

  get(deploymentId: string): DeploymentRecord | undefined {
    return this.records.get(deploymentId);
  }

  list(): DeploymentRecord[] {
    return [...this.records.values()].sort((a, b) => a.created_at - b.created_at || (a.deployment_id < b.deployment_id ? -1 : 1));
  }

  /** Whether any deployment has this instance_id (a caller may pass one where a deployment_id belongs). */
  isInstanceId(id: string): boolean {
    for (const record of this.records.values()) if (record.instance_id === id) return true;
    return false;
  }

  /** The instance the proxy may use: its deployment ACTIVE or UPGRADING, its core supervised. */
  instance(instanceId: string): LiveInstance | undefined {
    return this.live.get(instanceId);
  }

  /** Creates the deployment (PENDING, durable) and starts its core; ACTIVE once it answers. */
  async create(fields: NewDeployment): Promise<DeploymentRecord> {
    const now = this.now();
    const secretId = newId('sec');
    this.writeSecret(this.secretFile(secretId), newSecret('core'));
    this.writeSecret(this.tokenizationFile(secretId), newTokenizationSecret());
    const record = this.newRecord({
      name: fields.name, region: fields.region ?? 'local', tier: fields.tier ?? 'standard', user_id: fields.user_id ?? null,
      secret_id: secretId, replaces: null, rate_limit: fields.rate_limit ?? null,
    }, now);
    await this.save([record]);
    this.track(this.startCore(record));
    return record;
  }

  /** A new record for a deployment of this ledger (a fresh one, or the target of an upgrade). */
  newRecord(fields: Pick<DeploymentRecord, 'name' | 'region' | 'tier' | 'user_id' | 'secret_id' | 'replaces' | 'rate_limit'>, now: number): DeploymentRecord {
    const instanceId = newId('ins');
    return {
      deployment_id: newId('dep'), instance_id: instanceId, name: fields.name, ingress_mode: 'proxy', dedicated: true,
      tier: fields.tier, type: 'managed', region: fields.region, status: 'PENDING', watch_enabled: false,
      usage_billing_enabled: false, usage_billing_enabled_at: null, record_creates_blocked: false, created_at: now, updated_at: now,
      version: '', user_id: fields.user_id, secret_id: fields.secret_id, data_dir: path.join('instances', instanceId),
      replaces: fields.replaces, replaced_by: null, problem: null, cutover: null, rate_limit: fields.rate_limit ?? null,
    };
  }

  absoluteDataDir(record: DeploymentRecord): string {
    return path.resolve(this.dataDir, record.data_dir);
  }

  secretOf(record: DeploymentRecord): string {
    return fs.readFileSync(this.secretFile(record.secret_id), 'utf8');
  }

  /** Writes records (durably) and keeps them in memory. */
  async save(records: DeploymentRecord[]): Promise<void> {
    const changes: StoreChange[] = records.map((record) => ({ kind: 'deployment', id: record.deployment_id, value: record }));
    await this.store.commit(changes);
    for (const record of records) this.records.set(record.deployment_id, record);
  }

  /** A copy of the record with `changes` applied and updated_at moved on. */
  changed(record: DeploymentRecord, changes: Partial<DeploymentRecord>): DeploymentRecord {
    return { ...record, ...changes, updated_at: this.now() };
  }

  /** A supervised core for a record (not started), reporting its deaths on the deployment. */
  coreFor(record: DeploymentRecord, followDataDir?: string): SupervisedCore {
    return new SupervisedCore({
      dataDir: this.absoluteDataDir(record), secretKey: this.secretOf(record), tokenizationSecret: this.tokenizationSecretOf(record), followDataDir,
      logLevel: this.coreSettings.logLevel, hooksAllowPrivateNetworks: this.coreSettings.hooksAllowPrivateNetworks,
    }, record.instance_id, this.logger, proxyKeysFile(this.secretsDir(), record.secret_id), (core) => {
      if (core.state === 'failed') void this.coreGaveUp(record.deployment_id, core);
    });
  }

  /** The deployment's tokenization secret; one is made for a deployment created before cores had their own. */
  private tokenizationSecretOf(record: DeploymentRecord): string {
    const file = this.tokenizationFile(record.secret_id);
    if (!fs.existsSync(file)) this.writeSecret(file, newTokenizationSecret());
    return fs.readFileSync(file, 'utf8');
  }

  /** Puts a started core behind the proxy. */
  expose(instance: LiveInstance): void {
    this.live.set(instance.instanceId, instance);
  }

  /** Takes an instance away from the proxy (its deployment retired or failed). */
  withdraw(instanceId: string): LiveInstance | undefined {
    const instance = this.live.get(instanceId);
    this.live.delete(instanceId);
    return instance;
  }

  /** Starts the cores of every deployment that should run, repairing what a crash left half done. */
  async boot(): Promise<void> {
    const repaired: DeploymentRecord[] = [];
    for (const record of this.records.values()) {
      if (record.status === 'UPGRADING') repaired.push(this.changed(record, { status: 'ACTIVE' }));
      if (record.status === 'PENDING' && record.replaces !== null) {
        repaired.push(this.changed(record, { status: 'FAILED', problem: 'the control plane stopped before this upgrade switched over' }));
        fs.rmSync(this.absoluteDataDir(record), { recursive: true, force: true });
      }
    }
    if (repaired.length > 0) await this.save(repaired);
    for (const record of this.records.values()) {
      if (record.status === 'ACTIVE' || record.status === 'PENDING') this.track(this.startCore(record));
    }
  }

  /** Waits for the cores being started (tests and shutdown). */
  async settled(): Promise<void> {
    while (this.starting.size > 0) await Promise.allSettled([...this.starting]);
  }

  /** Stops every core (the control plane is stopping). */
  async stopAll(): Promise<void> {
    await this.settled();
    const instances = [...this.live.values()];
    this.live.clear();
    await Promise.allSettled(instances.map((instance) => instance.core.stop()));
  }

  private track(work: Promise<void>): void {
    this.starting.add(work);
    void work.finally(() => this.starting.delete(work));
  }

  private async startCore(record: DeploymentRecord): Promise<void> {
    const core = this.coreFor(record);
    try {
      await core.start();
    } catch (error) {
      const failed = this.changed(this.records.get(record.deployment_id) ?? record, { status: 'FAILED', problem: `the core did not start: ${(error as Error).message.slice(0, 500)}` });
      this.logger.warn({ deployment: record.deployment_id, err: (error as Error).message }, 'core did not start');
      await this.save([failed]).catch(() => undefined);
      return;
    }
    this.expose({ deploymentId: record.deployment_id, instanceId: record.instance_id, core, gate: new WriteGate() });
    const current = this.records.get(record.deployment_id) ?? record;
    const active = this.changed(current, { status: 'ACTIVE', version: core.version, problem: null });
    await this.save([active]).catch((error: Error) => this.logger.warn({ err: error.message }, 'cannot record a deployment as ACTIVE'));
  }

  private async coreGaveUp(deploymentId: string, core: SupervisedCore): Promise<void> {
    const record = this.records.get(deploymentId);
    if (!record || record.status !== 'ACTIVE') return;
    this.withdraw(record.instance_id);
    await this.save([this.changed(record, { status: 'FAILED', problem: `the core kept dying: ${core.problem.slice(0, 500)}` })]).catch(() => undefined);
  }

  private secretsDir(): string {
    return path.join(this.dataDir, 'secrets');
  }

  private secretFile(secretId: string): string {
    return path.join(this.secretsDir(), `${secretId}.key`);
  }

  private tokenizationFile(secretId: string): string {
    return path.join(this.secretsDir(), `${secretId}.tokenization.key`);
  }

  private writeSecret(file: string, secret: string): void {
    fs.mkdirSync(this.secretsDir(), { recursive: true, mode: 0o700 });
    fs.writeFileSync(file, secret, { mode: 0o600, flag: 'wx' });
    const handle = fs.openSync(file, 'r');
    fs.fsyncSync(handle);
    fs.closeSync(handle);
  }
}

/** A deployment as the API shows it (../shared/spec/interface.md 2.9 plus instance_id, version and the cutover). */
export function deploymentView(record: DeploymentRecord, rateLimitDefault?: ApiKeyRateLimit): Record<string, unknown> {
  const limit = record.rate_limit ?? rateLimitDefault;
  return {
    deployment_id: record.deployment_id,
    instance_id: record.instance_id,
    name: record.name,
    ingress_mode: record.ingress_mode,
    dedicated: record.dedicated,
    tier: record.tier,
    type: record.type,
    region: record.region,
    status: record.status,
    watch_enabled: record.watch_enabled,
    usage_billing_enabled: record.usage_billing_enabled,
    usage_billing_enabled_at: record.usage_billing_enabled_at === null ? ZERO_TIME : new Date(record.usage_billing_enabled_at).toISOString(),
    record_creates_blocked: record.record_creates_blocked,
    created_at: new Date(record.created_at).toISOString(),
    updated_at: new Date(record.updated_at).toISOString(),
    version: record.version,
    user_id: record.user_id ?? '',
    replaces: record.replaces ?? '',
    replaced_by: record.replaced_by ?? '',
    problem: record.problem ?? '',
    cutover: record.cutover,
    // The rate in effect through the proxy: its own, else the default; null: unlimited.
    rate_limit: limit ? { requests_per_second: limit.requests_per_second, burst: limit.burst } : null,
  };
}
