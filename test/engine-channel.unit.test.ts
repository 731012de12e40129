// The calls a worker makes to the engine's thread are one table (workers/engine-channel.ts CALLABLE) checked
// against the port interfaces: a remote port has exactly the methods the table names, and a call the
// table does not name, or with arguments its port does not take, does not compile (each such line
// below is marked as an expected type error, so the type check `npm test` runs fails if it compiles).

import { MessageChannel } from 'node:worker_threads';
import t from 'tap';
import { CALLABLE, SharedSeqs, type CallTarget } from '../workers/engine-channel.js';
import { EngineClient, remotePort } from '../workers/remote-ledger.js';
import type { SeqWait } from '../http/ports/ledger-core.js';

t.test('a remote port has exactly the callable methods of its target', async (t) => {
  const channel = new MessageChannel();
  t.teardown(() => channel.port1.close());
  const client = new EngineClient(channel.port2, SharedSeqs.create());
  for (const target of Object.keys(CALLABLE) as CallTarget[]) {
    const methods = CALLABLE[target];
    if (methods === 'LedgerView' || target === 'view') continue;
    t.same(Object.keys(remotePort(client, target as Exclude<CallTarget, 'view'>)).sort(), [...methods].sort(), target);
  }
});

/** Never run: its calls are checked by the compiler only. */
export function callsTheCompilerChecks(client: EngineClient): Promise<SeqWait> {
  // @ts-expect-error: the core port has no such method
  void client.call('core', 'runn', []);
  // @ts-expect-error: a method of the port that the table does not list is not callable
  void client.call('core', 'overloaded', []);
  // @ts-expect-error: the arguments must be the port's
  void client.call('core', 'appliedSeqReached', ['12', 5_000]);
  // @ts-expect-error: a target that does not exist
  void client.call('engine', 'run', []);
  // What a call answers is its port's answer, settled.
  return client.call('core', 'appliedSeqReached', [12, 5_000]);
}
