// Deployments:
//   POST /deployments {name, region?, tier?, user_id?, rate_limit?}   cloud API key; 201, PENDING until its
//                                                 core answers; rate_limit {requests_per_second, burst}: the
//                                                 proxy's bucket for it (docs/decisions-rate-limits.md)
//   GET  /deployments, GET /deployments/:id       cloud API key, or a token with deployments:read (its
//                                                 user's deployments only)
//   POST /deployments/:deployment_id/upgrade {force?}   cloud API key, or deployments:write: ../shared/spec/interface.md 4.14
// A token never learns that a deployment of another user exists: those answer 404 like unknown ids.

import type { Router } from '@koa/router';
import type Koa from 'koa';
import { z } from 'zod';
import { FOLIO_VERSION } from '../server/version.js';
import { CloudError } from './cloud-errors.js';
import { ApiError } from '../http/api-error.js';
import { toJsonText } from '../wire/json-text.js';
import { validate } from '../http/schemas/validation.js';
import { rateLimitSchema } from '../http/access/access-schemas.js';
import { requireOperator, requireScopes, type CloudPrincipal } from './cloud-auth.js';
import { deploymentView, type DeploymentRecord, type Deployments } from './deployments.js';
import type { Upgrades } from './upgrade.js';
import type { UserDirectory } from './users.js';

const labelSchema = z.string().trim().min(1).max(128).regex(/^[A-Za-z0-9 _.:-]+$/, 'letters, digits, spaces and _ . : -');

const newDeploymentSchema = z.object({
  name: labelSchema,
  region: labelSchema.optional(),
  tier: labelSchema.optional(),
  user_id: z.string().max(64).nullable().optional(),
  rate_limit: rateLimitSchema.optional(),
}).strict();

const upgradeSchema = z.object({ force: z.boolean().optional() }).strict();

export function sendJson(ctx: Koa.Context, status: number, value: unknown): void {
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.body = toJsonText(value);
}

function visibleTo(principal: CloudPrincipal, record: DeploymentRecord): boolean {
  return principal.kind === 'operator' || record.user_id === principal.holder.user_id;
}

export function deploymentRoutes(router: Router, parts: { users: UserDirectory; deployments: Deployments; upgrades: Upgrades }): void {
  const { users, deployments, upgrades } = parts;

  router.post('/deployments', async (ctx) => {
    requireOperator(ctx);
    const body = validate(newDeploymentSchema, ctx.request.body);
    if (body.user_id && !users.exists(body.user_id)) throw new ApiError('GEN_VALIDATION_ERROR', `user ${body.user_id} does not exist`, { user_id: 'unknown user' });
    const record = await deployments.create(body);
    sendJson(ctx, 201, deploymentView(record, deployments.rateLimitDefault));
  });

  router.get('/deployments', (ctx) => {
    const principal = requireScopes(ctx, ['deployments:read', 'deployments:write']);
    sendJson(ctx, 200, deployments.list().filter((record) => visibleTo(principal, record)).map((record) => deploymentView(record, deployments.rateLimitDefault)));
  });

  router.get('/deployments/:id', (ctx) => {
    const principal = requireScopes(ctx, ['deployments:read', 'deployments:write']);
    sendJson(ctx, 200, deploymentView(findDeployment(deployments, principal, ctx.params.id as string), deployments.rateLimitDefault));
  });

  router.post('/deployments/:id/upgrade', async (ctx) => {
    const principal = requireScopes(ctx, ['deployments:write']);
    const body = validate(upgradeSchema, ctx.request.body ?? {});
    const record = findDeployment(deployments, principal, ctx.params.id as string);
    const started = await upgrades.start(record, body.force === true);
    if (started.kind === 'not_active') {
      throw new CloudError('DEPLOYMENT_NOT_ACTIVE', `deployment ${record.deployment_id} is ${record.status}; only an ACTIVE deployment can be upgraded`, { status: record.status });
    }
    if (started.kind === 'skipped') {
      sendJson(ctx, 200, {
        deployment_id: record.deployment_id, previous_version: record.version, new_version: started.version, upgrade_status: 'skipped',
        message: `deployment ${record.deployment_id} already runs version ${started.version}; send {"force": true} to move it to a fresh process anyway`,
      });
      return;
    }
    sendJson(ctx, 202, {
      new_deployment: deploymentView(started.newRecord, deployments.rateLimitDefault),
      old_deployment_id: record.deployment_id,
      previous_version: started.previousVersion,
      new_version: FOLIO_VERSION,
      upgrade_status: 'in_progress',
      message: `deployment ${record.deployment_id} is moving to ${started.newRecord.deployment_id}; read its instance_id from GET /deployments/${started.newRecord.deployment_id} once it is ACTIVE`,
    });
  });
}

/**
 * The deployment named in the path, as the caller may see it. An instance_id there is a 404 that says so,
 * but only to a caller who may see that instance's deployment: to anyone else an id that exists is
 * answered exactly as one that does not.
 */
function findDeployment(deployments: Deployments, principal: CloudPrincipal, id: string): DeploymentRecord {
  const record = deployments.get(id);
  if (record && visibleTo(principal, record)) return record;
  if (deployments.list().some((candidate) => candidate.instance_id === id && visibleTo(principal, candidate))) {
    throw new CloudError('DEPLOYMENT_NOT_FOUND', `${id} is an instance_id; this path takes a deployment_id`);
  }
  throw new CloudError('DEPLOYMENT_NOT_FOUND', `deployment ${id} not found`);
}
