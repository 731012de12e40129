// The engine's decisions as specifications: given a history, when a command, then the events it logs
// (or its rejection). Each spec names the events it depends on; see helpers/engine-spec.ts.

import t, { type Test } from 'tap';
import { given } from './helpers/engine-spec.js';
import { balanceAmounts, checkReplay, create, fund, hold, ok, share, transfer, type EngineRig } from './helpers/engine-rig.js';
import type { LedgerEngine } from '../engine/ledger-engine.js';
import { GENERAL_LEDGER_ID } from '../engine/records.js';

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

t.test('the general ledger exists from genesis, once', async (t) => {
  const rig = given(t, []);
  t.ok(rig.engine.state.ledgers.has(GENERAL_LEDGER_ID));
  // A second genesis logs nothing.
  rig.when((engine) => engine.run({ op: 'genesis.ensure' })).then([]);
});

t.test('ledgers: LGR_NOT_FOUND, and an update merges metadata and keeps what it does not name', async (t) => {
  const rig = given(t, []);
  rig.when((engine) => engine.run({ op: 'ledger.update', ledger_id: 'ldg_missing', name: 'x' })).thenRejected('LGR_NOT_FOUND');
  rig.when((engine) => engine.run({ op: 'balance.create', ledger_id: 'ldg_missing', currency: 'USD', identity_id: '', indicator: '', meta_data: {} })).thenRejected('LGR_NOT_FOUND');
  const ledger = ok(rig.when((engine) => engine.run({ op: 'ledger.create', name: 'Operations', meta_data: { team: 'a', region: 'eu' } }))
    .then([{ type: 'ledger.created', ledgers: [{ name: 'Operations', meta_data: { team: 'a', region: 'eu' } }] }]).outcome);
  const updated = ok(rig.when((engine) => engine.run({ op: 'ledger.update', ledger_id: ledger.ledger_id, meta_data: { team: 'b' } }))
    .then([{ type: 'ledger.updated', ledgers: [{ ledger_id: ledger.ledger_id, name: 'Operations' }], metadata_patches: [{ entity_id: ledger.ledger_id, meta_data: { team: 'b' } }] }]).outcome);
  t.same(updated, { ...ledger, meta_data: { team: 'b', region: 'eu' } }, 'metadata merged, name kept');
  t.same(ledger.meta_data, { team: 'a', region: 'eu' }, 'the earlier record is not mutated');
  const renamed = ok(rig.when((engine) => engine.run({ op: 'ledger.update', ledger_id: ledger.ledger_id, name: 'Ops' }))
    .then([{ type: 'ledger.updated', ledgers: [{ ledger_id: ledger.ledger_id, name: 'Ops' }], metadata_patches: undefined }]).outcome);
  t.equal(renamed.name, 'Ops');
  t.same(rig.engine.state.ledgers.get(ledger.ledger_id), renamed, 'state holds the latest record');
});

t.test('balances: BAL_DUPLICATE_INDICATOR per (indicator, currency), across ledgers; no indicator is never a duplicate', async (t) => {
  const command = { ledger_id: GENERAL_LEDGER_ID, currency: 'USD', identity_id: '', indicator: 'treasury', meta_data: {} };
  const createBalance = (fields: Partial<typeof command> = {}) => (engine: LedgerEngine) => engine.run({ op: 'balance.create', ...command, ...fields });
  const rig = given(t, []);
  rig.when(createBalance()).then([{ type: 'balance.created', balances: [{ indicator: 'treasury', currency: 'USD' }] }]);
  rig.when(createBalance()).thenRejected('BAL_DUPLICATE_INDICATOR');
  const other = ok(rig.when((engine) => engine.run({ op: 'ledger.create', name: 'other', meta_data: {} })).then([{ type: 'ledger.created' }]).outcome);
  // Treasury USD in another ledger.
  rig.when(createBalance({ ledger_id: other.ledger_id })).thenRejected('BAL_DUPLICATE_INDICATOR');
  // Treasury EUR is a different balance.
  rig.when(createBalance({ currency: 'EUR' })).then([{ type: 'balance.created', balances: [{ indicator: 'treasury', currency: 'EUR' }] }]);
  // No indicator, twice: only names must be unique.
  rig.when(createBalance({ indicator: '' })).then([{ type: 'balance.created', balances: [{ indicator: '' }] }]);
  rig.when(createBalance({ indicator: '' })).then([{ type: 'balance.created', balances: [{ indicator: '' }] }]);
  // An explicit balance named like an @name a transfer created.
  rig.when(create({ source: '@world', destination: '@ops', allow_overdraft: true, skip_queue: true })).then([{ type: 'transaction.applied' }]);
  rig.when(createBalance({ indicator: '@ops' })).thenRejected('BAL_DUPLICATE_INDICATOR');
});

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
    .when((engine) => engine.run({ op: 'hold.act', transaction_id: holdId, action: 'commit', precise_amount: 100n, skip_queue: true }))
    .then([{
      type: 'transaction.committed',
      transactions: [{ transaction_id: holdId, status: 'INFLIGHT', committed_amount: 100n }, { action: 'commit', status: 'APPLIED', precise_amount: 100n }],
    }]);
});

t.test('a void of a committed hold is refused', async (t) => {
  let holdId = '';
  given(t, (engine) => {
    holdId = holdFromAlice(engine);
    engine.run({ op: 'hold.act', transaction_id: holdId, action: 'commit', precise_amount: 0n, skip_queue: true });
  })
    .when((engine) => engine.run({ op: 'hold.act', transaction_id: holdId, action: 'void', precise_amount: 0n, skip_queue: true }))
    .thenRejected('TXN_ALREADY_COMMITTED');
});

t.test('a reused reference with another body is a conflict; the same body is answered from the log', async (t) => {
  const first = transfer({ source: '@world', destination: '@alice', precise_amount: 7n, allow_overdraft: true, skip_queue: true, reference: 'ref-1' });
  given(t, (engine) => { engine.run({ op: 'transaction.create', ...first }); })
    .when((engine) => engine.run({ op: 'transaction.create', ...first, precise_amount: 8n }))
    .thenRejected('TXN_DUPLICATE_REFERENCE');
  given(t, (engine) => { engine.run({ op: 'transaction.create', ...first }); })
    .when((engine) => engine.run({ op: 'transaction.create', ...first }))
    .then([]);
});

t.test('a dry run decides and logs nothing', async (t) => {
  given(t, fundedAlice)
    .when((engine) => {
      const projection = engine.dryRun([{ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@carol', precise_amount: 250n, skip_queue: true }) }]).projections[0]!;
      t.equal(projection.would_apply, true);
      return undefined;
    })
    .then([]);
});

t.test('dry runs of creates, hold actions and refunds decide for real but write nothing', async (t) => {
  let holdId = '';
  let appliedId = '';
  const rig = given(t, (engine, rig) => {
    fund(rig, '@alice', 100n);
    holdId = hold(rig, '@alice', '@bob', 60n);
    appliedId = ok(create({ source: '@alice', destination: '@bob', precise_amount: 10n, skip_queue: true })(engine)).transaction.transaction_id;
  });
  const balancesBefore = balanceAmounts(rig.engine.state);
  rig.when((engine) => {
    const created = engine.dryRun([{ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@new', precise_amount: 30n }) }]).projections[0]!;
    t.equal(created.would_apply, true);
    t.equal(created.status, 'APPLIED');
    const short = engine.dryRun([{ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@bob', precise_amount: 31n }) }]).projections[0]!;
    t.equal(short.would_apply, false);
    t.equal(short.rejection?.code, 'TXN_INSUFFICIENT_FUNDS');
    t.equal(engine.dryRun([{ op: 'hold.act', transaction_id: holdId, action: 'commit', precise_amount: 61n, skip_queue: false }]).projections[0]!.rejection?.code, 'TXN_COMMIT_AMOUNT_EXCEEDED');
    t.equal(engine.dryRun([{ op: 'hold.act', transaction_id: holdId, action: 'void', precise_amount: 0n, skip_queue: false }]).projections[0]!.would_apply, true);
    t.equal(engine.dryRun([{ op: 'transaction.refund', transaction_id: appliedId, skip_queue: false, description: '', meta_data: {} }]).projections[0]!.would_apply, true);
    t.equal(engine.dryRun([{ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@x', precise_amount: 30n }) }]).projections[0]!.would_apply, true);
    return undefined;
  }).then([]);
  t.same(balanceAmounts(rig.engine.state), balancesBefore, 'balances unchanged');
  t.equal(rig.engine.state.balanceByIndicator('@new', 'USD'), undefined, 'no balance was created');
  t.equal(rig.engine.state.balanceByIndicator('@x', 'USD'), undefined);
  checkReplay(t, rig);
});

t.test('a metadata change logs the patch, not the merged object', async (t) => {
  let ledgerId = '';
  given(t, (engine) => {
    const created = engine.run({ op: 'ledger.create', name: 'l', meta_data: { a: 1 } });
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

t.test('hooks from before per-hook secrets are given the sealed secrets made for them, in one event', async (t) => {
  const AT = 1_767_268_800_000; // the rig's clock
  const old = { name: 'old', url: 'https://example.test/h', type: 'POST_TRANSACTION' as const, active: true, timeout: 5, retry_count: 0, created_at: AT };
  const history = [{
    type: 'hook.created' as const, at: AT, hooks: [
      { ...old, hook_id: 'hook_a' }, { ...old, hook_id: 'hook_b', signing_secret_sealed: 'v1.kept' }, { ...old, hook_id: 'hook_c' },
    ],
  }];
  let missing: string[] = [];
  given(t, history).when((engine) => {
    missing = engine.view.hooksWithoutSecrets();
    return engine.run({ op: 'hook.issue_secrets', sealed_by_hook_id: [['hook_a', 'v1.a'], ['hook_b', 'v1.not-used'], ['hook_c', 'v1.c'], ['hook_gone', 'v1.gone']] });
  }).then([{
    type: 'hook.updated',
    hooks: [{ hook_id: 'hook_a', name: 'old', signing_secret_sealed: 'v1.a' }, { hook_id: 'hook_c', signing_secret_sealed: 'v1.c' }],
  }]);
  t.same(missing, ['hook_a', 'hook_c'], 'the hooks without a secret');
  given(t, [...history, { type: 'hook.updated', at: AT + 1, hooks: [{ ...old, hook_id: 'hook_a', signing_secret_sealed: 'v1.a' }, { ...old, hook_id: 'hook_c', signing_secret_sealed: 'v1.c' }] }])
    .when((engine) => engine.run({ op: 'hook.issue_secrets', sealed_by_hook_id: [['hook_a', 'v1.again']] }))
    .then([]);
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

// ---- fund lineage (engine/decide-lineage.ts) ----

const PERSON = { identity_type: 'individual' as const, organization_name: '', first_name: 'Jack', last_name: 'Doe', other_names: '', gender: '', dob: 0, email_address: '', phone_number: '', nationality: '', category: '', street: '', city: '', state: '', country: '', post_code: '', meta_data: {} };

/** A balance `@name` that tracks fund lineage, with an identity of its own; returns its id. */
function trackedBalance(engine: LedgerEngine, name: string, strategy: 'FIFO' | 'LIFO' | 'PROPORTIONAL' = 'FIFO'): string {
  const identity = engine.run({ op: 'identity.create', fields: PERSON });
  if (!identity.ok) throw new Error(identity.rejection.message);
  const created = engine.run({ op: 'balance.create', ledger_id: 'general_ledger_id', currency: 'USD', identity_id: identity.value.identity_id, indicator: name, meta_data: {}, track_fund_lineage: true, allocation_strategy: strategy });
  if (!created.ok) throw new Error(created.rejection.message);
  return created.value.balance_id;
}

function run(engine: LedgerEngine, fields: Parameters<typeof transfer>[0]): void {
  const outcome = engine.run({ op: 'transaction.create', ...transfer({ skip_queue: true, ...fields }) });
  if (!outcome.ok) throw new Error(outcome.rejection.message);
}

/** @jack tracks lineage (FIFO unless said) and holds 5,000 from stripe, then 3,000 from paypal. */
function jackWithTwoProviders(strategy: 'FIFO' | 'LIFO' | 'PROPORTIONAL' = 'FIFO') {
  return (engine: LedgerEngine): void => {
    trackedBalance(engine, '@jack', strategy);
    run(engine, { source: '@world', destination: '@jack', precise_amount: 5_000n, allow_overdraft: true, meta_data: { BLNK_LINEAGE_PROVIDER: 'stripe' } });
    run(engine, { source: '@world', destination: '@jack', precise_amount: 3_000n, allow_overdraft: true, meta_data: { BLNK_LINEAGE_PROVIDER: 'paypal' } });
  };
}

t.test('lineage: a tagged credit into a balance that tracks lineage adds that provider\'s funds, in the same event', async (t) => {
  let jack = '';
  given(t, (engine) => { jack = trackedBalance(engine, '@jack'); })
    .when((engine) => engine.run({ op: 'transaction.create', ...transfer({ source: '@world', destination: '@jack', precise_amount: 10_000n, allow_overdraft: true, skip_queue: true, meta_data: { BLNK_LINEAGE_PROVIDER: 'stripe' } }) }))
    .then([{
      type: 'transaction.applied',
      transactions: [{ status: 'APPLIED', lineage_provider: 'stripe', fund_allocation: undefined }],
      lineage: [{ balance_id: jack, provider: 'stripe', field: 'received', amount: 10_000n }],
    }]);
  // Untagged, or into a balance that does not track lineage: nothing.
  given(t, (engine) => { trackedBalance(engine, '@jack'); })
    .when((engine) => engine.run({ op: 'transaction.create', ...transfer({ source: '@world', destination: '@jack', precise_amount: 10n, allow_overdraft: true, skip_queue: true }) }))
    .then([{ type: 'transaction.applied', lineage: undefined, transactions: [{ lineage_provider: undefined }] }]);
  given(t, fundedAlice)
    .when((engine) => engine.run({ op: 'transaction.create', ...transfer({ source: '@world', destination: '@alice', precise_amount: 10n, allow_overdraft: true, skip_queue: true, meta_data: { BLNK_LINEAGE_PROVIDER: 'stripe' } }) }))
    .then([{ type: 'transaction.applied', lineage: undefined, transactions: [{ lineage_provider: undefined }] }]);
});

t.test('lineage: a debit draws on tagged funds by the balance\'s strategy and records the allocation', async (t) => {
  const spend = (engine: LedgerEngine) => engine.run({ op: 'transaction.create', ...transfer({ source: '@jack', destination: '@merchant', precise_amount: 7_000n, skip_queue: true }) });
  let jack = '';
  given(t, (engine) => { jackWithTwoProviders()(engine); jack = engine.state.balanceByIndicator('@jack', 'USD')!.balance_id; })
    .when(spend)
    .then([{
      type: 'transaction.applied',
      transactions: [{ status: 'APPLIED', fund_allocation: [{ provider: 'stripe', amount: 5_000n }, { provider: 'paypal', amount: 2_000n }] }],
      lineage: [
        { balance_id: jack, provider: 'stripe', field: 'spent', amount: 5_000n },
        { balance_id: jack, provider: 'paypal', field: 'spent', amount: 2_000n },
      ],
    }]);
  given(t, jackWithTwoProviders('LIFO')).when(spend)
    .then([{ transactions: [{ fund_allocation: [{ provider: 'paypal', amount: 3_000n }, { provider: 'stripe', amount: 4_000n }] }] }]);
  // 5,000 : 3,000 of 7,000 is 4,375 : 2,625.
  given(t, jackWithTwoProviders('PROPORTIONAL')).when(spend)
    .then([{ transactions: [{ fund_allocation: [{ provider: 'stripe', amount: 4_375n }, { provider: 'paypal', amount: 2_625n }] }] }]);
  // Beyond the tagged funds the rest is untagged: the allocation covers what is tagged.
  given(t, (engine) => { jackWithTwoProviders()(engine); run(engine, { source: '@world', destination: '@jack', precise_amount: 1_000n, allow_overdraft: true }); })
    .when((engine) => engine.run({ op: 'transaction.create', ...transfer({ source: '@jack', destination: '@merchant', precise_amount: 8_500n, skip_queue: true }) }))
    .then([{ transactions: [{ fund_allocation: [{ provider: 'stripe', amount: 5_000n }, { provider: 'paypal', amount: 3_000n }] }] }]);
});

t.test('lineage: tags travel to a destination that tracks lineage; a provider tag on such a transfer adds nothing', async (t) => {
  let jack = '';
  let jill = '';
  given(t, (engine) => {
    jackWithTwoProviders()(engine);
    jack = engine.state.balanceByIndicator('@jack', 'USD')!.balance_id;
    jill = trackedBalance(engine, '@jill');
  })
    .when((engine) => engine.run({ op: 'transaction.create', ...transfer({ source: '@jack', destination: '@jill', precise_amount: 6_000n, skip_queue: true, meta_data: { BLNK_LINEAGE_PROVIDER: 'bank' } }) }))
    .then([{
      transactions: [{ fund_allocation: [{ provider: 'stripe', amount: 5_000n }, { provider: 'paypal', amount: 1_000n }], lineage_provider: undefined }],
      lineage: [
        { balance_id: jack, provider: 'stripe', field: 'spent', amount: 5_000n },
        { balance_id: jill, provider: 'stripe', field: 'received', amount: 5_000n },
        { balance_id: jack, provider: 'paypal', field: 'spent', amount: 1_000n },
        { balance_id: jill, provider: 'paypal', field: 'received', amount: 1_000n },
      ],
    }]);
});

t.test('lineage: a hold reserves tagged funds; commits settle them in allocation order; a void releases the rest', async (t) => {
  let holdId = '';
  let jack = '';
  const placeHold = (engine: LedgerEngine): void => {
    jackWithTwoProviders()(engine);
    jack = engine.state.balanceByIndicator('@jack', 'USD')!.balance_id;
    const hold = engine.run({ op: 'transaction.create', ...transfer({ source: '@jack', destination: '@merchant', precise_amount: 7_000n, inflight: true, skip_queue: true }) });
    if (!hold.ok) throw new Error(hold.rejection.message);
    holdId = hold.value.transaction.transaction_id;
    t.same(hold.value.transaction.fund_allocation, [{ provider: 'stripe', amount: 5_000n }, { provider: 'paypal', amount: 2_000n }], 'the hold records what it reserved');
    t.same(engine.state.lineage.get(jack)!.providers.map((funds) => funds.inflight_spent), [5_000n, 2_000n], 'reserved, not spent');
    // Reserved funds are not allocated again: a second debit draws on what is left (paypal's 1,000).
    const second = engine.run({ op: 'transaction.create', ...transfer({ source: '@jack', destination: '@merchant', precise_amount: 1_000n, skip_queue: true }) });
    t.same(second.ok && second.value.transaction.fund_allocation, [{ provider: 'paypal', amount: 1_000n }]);
  };
  const rig = given(t, placeHold)
    .when((engine) => engine.run({ op: 'hold.act', transaction_id: holdId, action: 'commit', precise_amount: 6_000n, skip_queue: true }))
    .then([{
      type: 'transaction.committed',
      transactions: [{ transaction_id: holdId, committed_amount: 6_000n }, { action: 'commit', precise_amount: 6_000n, fund_allocation: [{ provider: 'stripe', amount: 5_000n }, { provider: 'paypal', amount: 1_000n }] }],
      lineage: [
        { balance_id: jack, provider: 'stripe', field: 'inflight_spent', amount: -5_000n },
        { balance_id: jack, provider: 'stripe', field: 'spent', amount: 5_000n },
        { balance_id: jack, provider: 'paypal', field: 'inflight_spent', amount: -1_000n },
        { balance_id: jack, provider: 'paypal', field: 'spent', amount: 1_000n },
      ],
    }]);
  const before = rig.log.appendedSeq;
  t.ok(rig.engine.run({ op: 'hold.act', transaction_id: holdId, action: 'void', precise_amount: 0n, skip_queue: true }).ok);
  t.match(rig.log.events.slice(before), [{
    type: 'transaction.voided',
    transactions: [{ status: 'VOID' }, { action: 'void', fund_allocation: undefined }],
    lineage: [{ balance_id: jack, provider: 'paypal', field: 'inflight_spent', amount: -1_000n }],
  }], 'the void releases the paypal 1,000 still reserved');
  t.same(rig.engine.state.lineage.get(jack)!.providers.map(({ provider, received, spent, inflight_spent }) => [provider, received, spent, inflight_spent]),
    [['stripe', 5_000n, 5_000n, 0n], ['paypal', 3_000n, 2_000n, 0n]]);
  checkReplayLineage(t, rig);
});

t.test('lineage: a tagged credit held on its way in counts once committed (Blnk TestLineageInflightCommit / Void)', async (t) => {
  let holdId = '';
  let jack = '';
  const heldCredit = (engine: LedgerEngine): void => {
    jack = trackedBalance(engine, '@jack');
    const hold = engine.run({ op: 'transaction.create', ...transfer({ source: '@world', destination: '@jack', precise_amount: 5_000n, allow_overdraft: true, inflight: true, skip_queue: true, meta_data: { BLNK_LINEAGE_PROVIDER: 'paypal' } }) });
    if (!hold.ok) throw new Error(hold.rejection.message);
    holdId = hold.value.transaction.transaction_id;
    // The tag on the hold's metadata changing later must not change which provider the commit settles.
    engine.run({ op: 'metadata.update', entity_id: holdId, meta_data: { BLNK_LINEAGE_PROVIDER: 'bank' } });
  };
  given(t, heldCredit)
    .when((engine) => engine.run({ op: 'hold.act', transaction_id: holdId, action: 'commit', precise_amount: 0n, skip_queue: true }))
    .then([{
      transactions: [{ status: 'APPLIED' }, { action: 'commit', lineage_provider: 'paypal' }],
      lineage: [{ balance_id: jack, provider: 'paypal', field: 'inflight_received', amount: -5_000n }, { balance_id: jack, provider: 'paypal', field: 'received', amount: 5_000n }],
    }]);
  given(t, heldCredit)
    .when((engine) => engine.run({ op: 'hold.act', transaction_id: holdId, action: 'void', precise_amount: 0n, skip_queue: true }))
    .then([{ transactions: [{ status: 'VOID' }, { action: 'void' }], lineage: [{ balance_id: jack, provider: 'paypal', field: 'inflight_received', amount: -5_000n }] }]);
});

t.test('lineage: items of one decision allocate from what the items before them left; a refused group leaves nothing', async (t) => {
  given(t, jackWithTwoProviders())
    .when((engine) => engine.run({ op: 'transaction.bulk', atomic: true, inflight: false, skip_queue: true, transactions: [
      transfer({ source: '@jack', destination: '@merchant', precise_amount: 4_000n }),
      transfer({ source: '@jack', destination: '@merchant', precise_amount: 2_000n }),
    ] }))
    .then([{ type: 'transaction.bulk', transactions: [
      { fund_allocation: [{ provider: 'stripe', amount: 4_000n }] },
      { fund_allocation: [{ provider: 'stripe', amount: 1_000n }, { provider: 'paypal', amount: 1_000n }] },
    ] }]);
  // An atomic split whose second leg is short: nothing moves, and neither does lineage.
  const rig = given(t, (engine) => { jackWithTwoProviders()(engine); fundedAlice(engine); })
    .when((engine) => engine.run({ op: 'transaction.create', ...transfer({ source: '', sources: [share('@jack', '6000'), share('@alice', 'left')], destination: '@merchant', precise_amount: 8_000n, atomic: true, skip_queue: true }) }))
    .thenRejected('TXN_INSUFFICIENT_FUNDS');
  const jack = rig.engine.state.balanceByIndicator('@jack', 'USD')!.balance_id;
  t.same(rig.engine.state.lineage.get(jack)!.providers.map((funds) => funds.spent), [0n, 0n], 'nothing spent');
  // A dry run shows the allocation and changes nothing.
  const projection = rig.engine.dryRun([{ op: 'transaction.create', ...transfer({ source: '@jack', destination: '@merchant', precise_amount: 6_000n }) }]).projections[0]!;
  t.same(projection.transaction?.fund_allocation, [{ provider: 'stripe', amount: 5_000n }, { provider: 'paypal', amount: 1_000n }], 'the dry run shows the allocation');
  t.same(rig.engine.state.lineage.get(jack)!.providers.map((funds) => funds.spent), [0n, 0n], 'and leaves the lineage as it was');
});

t.test('lineage: bounds on provider tags', async (t) => {
  given(t, (engine) => { trackedBalance(engine, '@jack'); })
    .when((engine) => engine.run({ op: 'transaction.create', ...transfer({ source: '@world', destination: '@jack', precise_amount: 1n, allow_overdraft: true, skip_queue: true, meta_data: { BLNK_LINEAGE_PROVIDER: 'p'.repeat(129) } }) }))
    .thenRejected('TXN_VALIDATION_ERROR');
  const hundredProviders = (engine: LedgerEngine): void => {
    trackedBalance(engine, '@jack');
    for (let index = 0; index < 100; index += 1) run(engine, { source: '@world', destination: '@jack', precise_amount: 1n, allow_overdraft: true, meta_data: { BLNK_LINEAGE_PROVIDER: `provider-${index}` } });
  };
  given(t, hundredProviders)
    .when((engine) => engine.run({ op: 'transaction.create', ...transfer({ source: '@world', destination: '@jack', precise_amount: 1n, allow_overdraft: true, skip_queue: true, meta_data: { BLNK_LINEAGE_PROVIDER: 'one-too-many' } }) }))
    .thenRejected('BAL_LINEAGE_LIMIT_EXCEEDED');
  given(t, hundredProviders)
    .when((engine) => engine.run({ op: 'transaction.create', ...transfer({ source: '@world', destination: '@jack', precise_amount: 1n, allow_overdraft: true, skip_queue: true, meta_data: { BLNK_LINEAGE_PROVIDER: 'provider-7' } }) }))
    .then([{ type: 'transaction.applied' }]);
  // A provider that is not a string, or empty, tags nothing (Blnk ignores it).
  given(t, (engine) => { trackedBalance(engine, '@jack'); })
    .when((engine) => engine.run({ op: 'transaction.create', ...transfer({ source: '@world', destination: '@jack', precise_amount: 1n, allow_overdraft: true, skip_queue: true, meta_data: { BLNK_LINEAGE_PROVIDER: 42 } }) }))
    .then([{ type: 'transaction.applied', lineage: undefined }]);
});

t.test('lineage: a balance that tracks lineage needs an identity', async (t) => {
  given(t, [])
    .when((engine) => engine.run({ op: 'balance.create', ledger_id: 'general_ledger_id', currency: 'USD', identity_id: '', indicator: '', meta_data: {}, track_fund_lineage: true }))
    .thenRejected('IDT_NOT_FOUND');
});

/** The lineage a replay of the log builds is the one the engine built. */
function checkReplayLineage(t: Test, rig: EngineRig): void {
  const copy = checkReplay(t, rig);
  t.same([...copy.engine.state.lineage.entries()], [...rig.engine.state.lineage.entries()], 'replay: the same fund lineage');
}
