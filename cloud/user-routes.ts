// Users: the people who sign in on the authorization page.
//   POST /users {email, password}   cloud API key; 201 {user_id, email, created_at}; 409 USER_EMAIL_TAKEN

import type { Router } from '@koa/router';
import { z } from 'zod';
import { CloudError } from './cloud-errors.js';
import { ApiError } from '../http/api-error.js';
import { validate } from '../http/schemas/validation.js';
import { requireOperator } from './cloud-auth.js';
import { sendJson } from './deployment-routes.js';
import { PASSWORD_LENGTH_MAX, PASSWORD_LENGTH_MIN } from './secrets.js';
import { userView, type UserDirectory } from './users.js';

const newUserSchema = z.object({
  email: z.email().max(320),
  password: z.string().min(PASSWORD_LENGTH_MIN).max(PASSWORD_LENGTH_MAX),
}).strict();

export function userRoutes(router: Router, parts: { users: UserDirectory; now: () => number }): void {
  router.post('/users', async (ctx) => {
    requireOperator(ctx);
    const body = validate(newUserSchema, ctx.request.body);
    const created = await parts.users.create(body.email, body.password, parts.now());
    if (!created.ok) throw new CloudError('USER_EMAIL_TAKEN', `a user with e-mail ${body.email} exists already`);
    sendJson(ctx, 201, userView(created.user));
  });
}
