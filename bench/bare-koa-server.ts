// The http bench's baseline server: Koa with koa-body parsing the JSON request, answering POST
// /transactions with 201 and the same JSON a Folio transfer returns (given in FOLIO_BENCH_BARE_RESPONSE).
// It does no ledger work and waits for no disk, so it marks what the framework alone costs here.
// It prints its address like `folio serve` does and exits when the bench closes its stdin.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { koaBody } from 'koa-body';

const responseText = process.env.FOLIO_BENCH_BARE_RESPONSE;
if (!responseText) {
  process.stderr.write('FOLIO_BENCH_BARE_RESPONSE is not set\n');
  process.exit(2);
}
// Koa serialises an object body on every response, as a typical Koa handler's reply would be.
const response: unknown = JSON.parse(responseText);

const app = new Koa();
app.use(koaBody());
app.use((ctx) => {
  if (ctx.method !== 'POST' || ctx.path !== '/transactions') {
    ctx.status = 404;
    return;
  }
  if (typeof ctx.request.body !== 'object' || ctx.request.body === null) ctx.throw(400, 'expected a JSON object');
  ctx.status = 201;
  ctx.body = response;
});

const server = http.createServer(app.callback());
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  const { address, port } = server.address() as AddressInfo;
  process.stdout.write(`listening on http://${address}:${port}\n`);
});

// The bench owns this process: when it goes away (stdin closes), so does the server.
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
