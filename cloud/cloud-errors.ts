// The control plane's own refusals: codes the core never answers with (users, OAuth clients,
// deployments, the proxy), kept out of the core's table (http/api-error.ts) and its API reference.
// They are answered in the same error envelope as the core's (http/middleware/error-envelope.ts).

import { EnvelopeError } from '../http/api-error.js';

/** HTTP status of every code only the control plane answers with. */
export const CLOUD_STATUS_BY_CODE = {
  USER_EMAIL_TAKEN: 409,
  OAUTH_CLIENT_NOT_FOUND: 404,
  DEPLOYMENT_NOT_FOUND: 404,
  DEPLOYMENT_NOT_ACTIVE: 409,
  DEPLOYMENT_UNAVAILABLE: 503,
  INSTANCE_NOT_FOUND: 404,
  PROXY_PATH_INVALID: 400,
  PROXY_ROUTE_FORBIDDEN: 403,
  PROXY_HEADER_INVALID: 400,
  PROXY_BODY_NOT_ALLOWED: 400,
  PROXY_UPSTREAM_FAILED: 502,
  PROXY_TIMEOUT: 504,
} as const;

export type CloudErrorCode = keyof typeof CLOUD_STATUS_BY_CODE;

export class CloudError extends EnvelopeError {
  override readonly name = 'CloudError';
  declare readonly code: CloudErrorCode;

  constructor(code: CloudErrorCode, message: string, details?: Record<string, unknown>, headers?: Record<string, string>) {
    super(code, CLOUD_STATUS_BY_CODE[code], message, details, headers);
  }
}
