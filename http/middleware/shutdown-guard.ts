// While the server drains for shutdown, every new request is answered 503 GEN_SHUTTING_DOWN, and told to
// close its connection: keep-alive clients must let go, or closing the server waits out its grace.

import type Koa from 'koa';
import { ApiError } from '../api-error.js';

export function refuseWhileShuttingDown(shuttingDown: () => boolean): Koa.Middleware {
  return (ctx, next) => {
    if (!shuttingDown()) return next();
    ctx.set('Connection', 'close');
    throw new ApiError('GEN_SHUTTING_DOWN', 'server is shutting down');
  };
}
