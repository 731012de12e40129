// GET /credentials/current: what the credential a request carries may do here, for a client (the
// console) to offer only what it may: the cloud API key (the operator, everything) or an access token
// with its scopes and the user and client it was issued to. Any valid credential reads its own; none
// gets 401, as every route that needs one.

import type { Router } from '@koa/router';
import type { CloudPrincipal } from './cloud-auth.js';
import { ApiError } from '../http/api-error.js';

export function credentialRoutes(router: Router): void {
  router.get('/credentials/current', (ctx) => {
    const principal = ctx.state.principal as CloudPrincipal | undefined;
    if (!principal) throw new ApiError('AUTH_MISSING_API_KEY', 'a cloud API key or access token is required (X-svc-key header)');
    ctx.body = principal.kind === 'operator'
      ? { kind: 'cloud_key', scopes: ['*'] }
      : { kind: 'token', scopes: principal.holder.scopes, user_id: principal.holder.user_id, client_id: principal.holder.client_id };
  });
}
