// The engine's decisions as specifications: given a history, when a command, then the events it logs
// (or its rejection). Each spec names the events it depends on; see helpers/engine-spec.ts.

import t from 'tap';
import { given } from './helpers/engine-spec.js';
import { share, transfer } from './helpers/engine-rig.js';
import type { LedgerEngine } from '../engine/ledger-engine.js';

/** A history in which @alice holds 1,000 USD units, funded from @world. */
function fundedAlice(engine: LedgerEngine): void {
  const funded = engine.run({ op: 'transaction.create', ...transfer({ source: '@world', destination: '@alice', precise_amount: 1_000n, allow_overdraft: true, skip_queue: true }) });
  if (!funded.ok) throw new Error(funded.rejection.message);
}

function holdFromAlice(engine: LedgerEngine): string {
  fundedAlice(engine);
  const hold = engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@bob', precise_amount: 300n, inflight: true, skip_queue: true }) });
  if (!hold.ok) throw new Error(hold.rejection.message);
  return hold.value.transaction.transaction_id;
}

t.test('a synchronous transfer logs one applied event with balanced postings', async (t) => {
  given(t, fundedAlice)
    .when((engine) => engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@carol', precise_amount: 250n, skip_queue: true }) }))
    .then([{
      type: 'transaction.applied',
      transactions: [{ status: 'APPLIED', precise_amount: 250n }],
      postings: [{ field: 'debit', amount: 250n }, { field: 'credit', amount: 250n }],
    }]);
});

t.test('a transfer beyond the available amount is refused and logs nothing', async (t) => {
  given(t, fundedAlice)
    .when((engine) => engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@carol', precise_amount: 1_001n, skip_queue: true }) }))
    .thenRejected('TXN_INSUFFICIENT_FUNDS');
});

t.test('an overdraft limit lets the source go down to minus the limit, with or without allow_overdraft', async (t) => {
  for (const allowOverdraft of [false, true]) {
    given(t, fundedAlice)
      .when((engine) => engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@carol', precise_amount: 1_500n, overdraft_limit: 500n, allow_overdraft: allowOverdraft, skip_queue: true }) }))
      .then([{ type: 'transaction.applied', transactions: [{ status: 'APPLIED', overdraft_limit: 500n }] }]);
    given(t, fundedAlice)
      .when((engine) => engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@carol', precise_amount: 1_501n, overdraft_limit: 500n, allow_overdraft: allowOverdraft, skip_queue: true }) }))
      .thenRejected('TXN_OVERDRAFT_LIMIT_EXCEEDED');
  }
});

t.test('allow_overdraft without a limit has no floor', async (t) => {
  given(t, fundedAlice)
    .when((engine) => engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@carol', precise_amount: 10n ** 30n, allow_overdraft: true, skip_queue: true }) }))
    .then([{ type: 'transaction.applied' }]);
});

t.test('a queued transfer past its limit is rejected for the limit when its turn comes', async (t) => {
  const rig = given(t, fundedAlice)
    .when((engine) => engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@carol', precise_amount: 1_200n, overdraft_limit: 100n }) }))
    .then([{ type: 'transaction.queued', transactions: [{ status: 'QUEUED', overdraft_limit: 100n }] }]);
  const before = rig.log.appendedSeq;
  rig.engine.run({ op: 'queue.process', items_max: 10 }).value;
  t.match(rig.log.events.slice(before), [{ type: 'transaction.rejected', transactions: [{ status: 'REJECTED', rejection: { code: 'TXN_OVERDRAFT_LIMIT_EXCEEDED' } }] }]);
});

t.test('a queued transfer logs a queued event; its turn logs the outcome', async (t) => {
  const rig = given(t, fundedAlice)
    .when((engine) => engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@carol', precise_amount: 5n }) }))
    .then([{ type: 'transaction.queued', transactions: [{ status: 'QUEUED' }] }]);
  const before = rig.log.appendedSeq;
  rig.engine.run({ op: 'queue.process', items_max: 10 }).value;
  t.match(rig.log.events.slice(before), [{ type: 'transaction.applied', transactions: [{ status: 'APPLIED' }] }]);
});

t.test('a hold reserves, a commit settles part of it, the rest stays held', async (t) => {
  let holdId = '';
  given(t, (engine) => { holdId = holdFromAlice(engine); })
    .when((engine) => engine.run({ op: 'hold.act', ...{ transaction_id: holdId, action: 'commit', precise_amount: 100n, skip_queue: true } }))
    .then([{
      type: 'transaction.committed',
      transactions: [{ transaction_id: holdId, status: 'INFLIGHT', committed_amount: 100n }, { action: 'commit', status: 'APPLIED', precise_amount: 100n }],
    }]);
});

t.test('a void of a committed hold is refused', async (t) => {
  let holdId = '';
  given(t, (engine) => {
    holdId = holdFromAlice(engine);
    engine.run({ op: 'hold.act', ...{ transaction_id: holdId, action: 'commit', precise_amount: 0n, skip_queue: true } });
  })
    .when((engine) => engine.run({ op: 'hold.act', ...{ transaction_id: holdId, action: 'void', precise_amount: 0n, skip_queue: true } }))
    .thenRejected('TXN_ALREADY_COMMITTED');
});

t.test('a reused reference with another body is a conflict; the same body is answered from the log', async (t) => {
  const first = transfer({ source: '@world', destination: '@alice', precise_amount: 7n, allow_overdraft: true, skip_queue: true, reference: 'ref-1' });
  given(t, (engine) => { engine.run({ op: 'transaction.create', ...first }); })
    .when((engine) => engine.run({ op: 'transaction.create', ...{ ...first, precise_amount: 8n } }))
    .thenRejected('TXN_DUPLICATE_REFERENCE');
  given(t, (engine) => { engine.run({ op: 'transaction.create', ...first }); })
    .when((engine) => engine.run({ op: 'transaction.create', ...first }))
    .then([]);
});

t.test('a dry run decides and logs nothing', async (t) => {
  given(t, fundedAlice)
    .when((engine) => {
      const projection = engine.dryRun([{ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@carol', precise_amount: 250n, skip_queue: true }) }])[0]!;
      t.equal(projection.would_apply, true);
      return undefined;
    })
    .then([]);
});

t.test('a metadata change logs the patch, not the merged object', async (t) => {
  let ledgerId = '';
  given(t, (engine) => {
    const created = engine.run({ op: 'ledger.create', ...{ name: 'l', meta_data: { a: 1 } } });
    if (created.ok) ledgerId = created.value.ledger_id;
  })
    .when((engine) => engine.run({ op: 'metadata.update', entity_id: ledgerId, meta_data: { b: 2 } }))
    .then([{ type: 'metadata.updated', metadata_patches: [{ entity_id: ledgerId, meta_data: { b: 2 } }] }]);
});

t.test('revoking a key revokes the keys made from it, in one event', async (t) => {
  const key = (name: string, createdBy: string) => ({ name, owner_id: 'o', scopes: ['ledgers:read'], expires_at: 0, secret_hash: 'h', created_by: createdBy });
  let rootId = '';
  given(t, (engine) => {
    const make = (name: string, createdBy: string): string => {
      const made = engine.run({ op: 'api_key.create', fields: key(name, createdBy) });
      return made.ok ? made.value.api_key_id : '';
    };
    rootId = make('root', '');
    make('grandchild', make('child', rootId));
    make('other', '');
  })
    .when((engine) => engine.run({ op: 'api_key.revoke', api_key_id: rootId }))
    .then([{ type: 'api_key.revoked', api_keys: [{ name: 'root', is_revoked: true }, { name: 'child', is_revoked: true }, { name: 'grandchild', is_revoked: true }] }]);
});

t.test('an identity under the caller\'s id keeps it; the same id again is a conflict and logs nothing', async (t) => {
  const fields = { identity_type: 'individual' as const, organization_name: '', first_name: 'Ada', last_name: '', other_names: '', gender: '', dob: 0, email_address: '', phone_number: '', nationality: '', category: '', street: '', city: '', state: '', country: '', post_code: '', meta_data: {} };
  const chosen = 'idt_11111111-1111-4111-8111-111111111111';
  given(t, [])
    .when((engine) => engine.run({ op: 'identity.create', fields, identity_id: chosen }))
    .then([{ type: 'identity.created', identities: [{ identity_id: chosen, first_name: 'Ada' }] }]);
  given(t, (engine) => { engine.run({ op: 'identity.create', fields, identity_id: chosen }); })
    .when((engine) => engine.run({ op: 'identity.create', fields: { ...fields, first_name: 'Eve' }, identity_id: chosen }))
    .thenRejected('GEN_CONFLICT');
});

t.test('queued checks: a transfer is refused when the source cannot cover it after what is already queued against it', async (t) => {
  const queuedChecks = { queued_checks: true };
  const queueFromAlice = (engine: LedgerEngine): void => {
    fundedAlice(engine);
    const queued = engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@bob', precise_amount: 800n }) });
    if (!queued.ok) throw new Error(queued.rejection.message);
  };
  // 1,000 available, 800 queued: 300 more cannot join the queue, nor go at once past a split's queued share.
  given(t, queueFromAlice, queuedChecks)
    .when((engine) => engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@carol', precise_amount: 300n }) }))
    .thenRejected('TXN_INSUFFICIENT_FUNDS');
  given(t, queueFromAlice, queuedChecks)
    .when((engine) => engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@carol', precise_amount: 200n }) }))
    .then([{ type: 'transaction.queued', transactions: [{ status: 'QUEUED', precise_amount: 200n }] }]);
  // An overdraft limit counts from what is left after the queue, as Blnk's canProcessTransaction does.
  given(t, queueFromAlice, queuedChecks)
    .when((engine) => engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@carol', precise_amount: 300n, overdraft_limit: 99n }) }))
    .thenRejected('TXN_OVERDRAFT_LIMIT_EXCEEDED');
  given(t, queueFromAlice, queuedChecks)
    .when((engine) => engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@carol', precise_amount: 300n, overdraft_limit: 100n }) }))
    .then([{ type: 'transaction.queued' }]);
  // Off (the default), the queue is not counted: the same transfer joins and is judged when its turn comes.
  given(t, queueFromAlice)
    .when((engine) => engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@carol', precise_amount: 300n }) }))
    .then([{ type: 'transaction.queued' }]);
  // A queued transfer whose turn comes is not held back by itself or by what queued behind it.
  const rig = given(t, queueFromAlice, queuedChecks)
    .when((engine) => engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@carol', precise_amount: 200n }) }))
    .then([{ type: 'transaction.queued' }]);
  const before = rig.log.appendedSeq;
  rig.engine.run({ op: 'queue.process', items_max: 10 });
  t.match(rig.log.events.slice(before), [{ type: 'transaction.applied' }, { type: 'transaction.applied' }], 'both queued transfers apply in their turn');
});

t.test('queued checks: a synchronous transfer leaves room for a split share queued in another balance\'s mailbox', async (t) => {
  const queuedSplit = (engine: LedgerEngine): void => {
    fundedAlice(engine);
    const funded = engine.run({ op: 'transaction.create', ...transfer({ source: '@world', destination: '@dan', precise_amount: 500n, allow_overdraft: true, skip_queue: true }) });
    if (!funded.ok) throw new Error(funded.rejection.message);
    // Waits in @dan's mailbox (its first source); 600 of it is to come out of @alice.
    const split = engine.run({ op: 'transaction.create', ...transfer({ source: '', sources: [share('@dan', '400'), share('@alice', 'left')], destination: '@bob', precise_amount: 1_000n }) });
    if (!split.ok) throw new Error(split.rejection.message);
  };
  given(t, queuedSplit, { queued_checks: true })
    .when((engine) => engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@carol', precise_amount: 401n, skip_queue: true }) }))
    .thenRejected('TXN_INSUFFICIENT_FUNDS');
  given(t, queuedSplit, { queued_checks: true })
    .when((engine) => engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@carol', precise_amount: 400n, skip_queue: true }) }))
    .then([{ type: 'transaction.applied' }]);
  // The items of one queued bulk count against each other.
  given(t, fundedAlice, { queued_checks: true })
    .when((engine) => engine.run({ op: 'transaction.bulk', atomic: false, inflight: false, skip_queue: false, transactions: [
      transfer({ source: '@alice', destination: '@bob', precise_amount: 700n }),
      transfer({ source: '@alice', destination: '@bob', precise_amount: 301n }),
    ] }))
    .then([{ type: 'transaction.bulk', transactions: [{ status: 'QUEUED', precise_amount: 700n }] }]);
});
