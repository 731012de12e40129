// The binary create and bulk commands (codec/command-codec.ts) carry what a request asked for beyond a
// plain transfer and give it back exactly: preconditions (negative thresholds past 64 bits included) and
// include_balances on a create, include_balances among a bulk's flags; a plain transfer reads back with
// neither.

import t from 'tap';
import { ByteReader, ByteWriter } from '../codec/byte-writer.js';
import { readBulkCommand, readCreateCommand, writeBulkCommand, writeCreateCommand } from '../codec/command-codec.js';
import { transferCommand, type BulkCommand, type CreateTransactionCommand } from '../engine/commands.js';

function roundTrip(command: CreateTransactionCommand): CreateTransactionCommand {
  const out = new ByteWriter();
  writeCreateCommand(out, command);
  return readCreateCommand(new ByteReader(out.bytes()));
}

t.test('a create keeps its preconditions and include_balances; a plain one has neither', async (t) => {
  const plain = transferCommand({ source: 'bln_a', destination: '@b', precise_amount: 5n, currency: 'USD' });
  const back = roundTrip(plain);
  t.same(back, plain);
  t.notOk('preconditions' in back || 'include_balances' in back, 'nothing added');
  const conditional: CreateTransactionCommand = {
    ...plain,
    preconditions: [
      { balance_id: 'bln_a', version: 3 },
      { balance_id: '@b', field: 'available_balance', operator: '>=', precise_value: -(2n ** 80n) },
    ],
    include_balances: true,
  };
  t.same(roundTrip(conditional), conditional);
});

t.test('a bulk keeps include_balances among its flags', async (t) => {
  const item = transferCommand({ source: 'bln_a', destination: '@b', precise_amount: 5n, currency: 'USD' });
  for (const include of [true, undefined]) {
    const bulk: BulkCommand = { transactions: [item], atomic: true, inflight: false, skip_queue: true, ...(include && { include_balances: include }) };
    const out = new ByteWriter();
    writeBulkCommand(out, bulk);
    t.same(readBulkCommand(new ByteReader(out.bytes())), bulk, `include_balances ${String(include)}`);
  }
});
