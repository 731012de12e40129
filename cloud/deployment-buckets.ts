// Fair use per deployment: the proxy's token bucket for each instance it forwards to, with the same
// arithmetic as a core's buckets per API key (http/access/rate-buckets.ts bucketStep: the theoretical
// arrival time in integer nanoseconds of the monotonic clock). The control plane serves HTTP on one
// thread, so a plain map holds them; there is one entry per instance that was ever limited, which the
// deployments bound.

import type { ApiKeyRateLimit } from '../engine/records.js';
import { bucketStep, type RateDecision } from '../http/access/rate-buckets.js';

export class DeploymentBuckets {
  private readonly arrivals = new Map<string, bigint>();

  /** Takes one request from `instanceId`'s bucket now. */
  take(instanceId: string, limit: ApiKeyRateLimit, now: bigint = process.hrtime.bigint()): RateDecision {
    const { decision, next } = bucketStep(this.arrivals.get(instanceId) ?? 0n, now, limit);
    if (decision.admitted) this.arrivals.set(instanceId, next);
    return decision;
  }
}
