// The one table of operations, keyed by the command's `op` (commands.ts): the engine runs a command by
// looking up its operation here and nothing else. `satisfies` makes a command without an operation a
// compile error, and each operation's value type is what `LedgerEngine.run` answers for its command.
// Operations on transactions live in their decide-*.ts files; the small ones (ledgers, balances, the
// records beside the money, reconciliation runs, and the engine's own work) are written here over the
// registry decisions.

import type { CommandOf, CommandOp } from './commands.js';
import { batchActionOperation, manyActionsOperation } from './decide-hold-batches.js';
import { bulkOperation } from './decide-bulk.js';
import { closePeriodOperation } from './closed-periods.js';
import { createOperation } from './decide-create.js';
import { inflightActionOperation } from './decide-inflight-action.js';
import {
  decideCompleteReconciliation,
  decideCreateMatchingRule,
  decideDeleteMatchingRule,
  decideFailReconciliation,
  decideReconciliationProgress,
  decideResumeReconciliation,
  decideStartReconciliation,
  decideUpdateMatchingRule,
  decideUpload,
} from './decide-reconciliation.js';
import { refundOperation } from './decide-refund.js';
import {
  decideApiKeysUsed,
  decideCreateApiKey,
  decideCreateHook,
  decideCreateIdentity,
  decideCreateMonitor,
  decideDeleteHook,
  decideDeleteIdentity,
  decideDeleteMonitor,
  decideIssueHookSecrets,
  decideMetadata,
  decideRevokeApiKey,
  decideRotateHookSecret,
  decideUpdateHook,
  decideUpdateIdentity,
  decideUpdateMonitor,
  metadataSizeRefusal,
  type RegistryDecision,
} from './decide-registry.js';
import { newBalance, type DecisionScope } from './decision-scope.js';
import type { LedgerEvent } from './events.js';
import type { ReconciliationRecord } from './reconciliation-records.js';
import { mergeMetaData } from './metadata.js';
import type { Decision, Infallible, Operation, Work } from './operation.js';
import { GENERAL_LEDGER_ID, type BalanceRecord, type LedgerRecord } from './records.js';
import { reject, type RejectionCode } from './rejections.js';
import { accept, refuse, type Decided } from './result.js';

/** A decision whose whole answer is one registry decision: its event is emitted, its record answered. */
function registry<C, T>(rejections: readonly RejectionCode[], decide: (scope: DecisionScope, command: C) => RegistryDecision<T>): Decision<C, T> {
  return {
    rejections,
    decide(scope, command) {
      const decided = decide(scope, command);
      if (!decided.ok) return decided;
      scope.emit(decided.value.event);
      return accept(decided.value.record);
    },
  };
}

/** Emits `event` and answers `value`. */
function emitted<T>(scope: DecisionScope, value: T, event: LedgerEvent): Decided<T> {
  scope.emit(event);
  return accept(value);
}

const genesis: Infallible<CommandOf<'genesis.ensure'>, LedgerRecord> = {
  rejections: [],
  decide(scope) {
    const existing = scope.state.ledgers.get(GENERAL_LEDGER_ID);
    if (existing) return accept(existing);
    const ledger: LedgerRecord = { ledger_id: GENERAL_LEDGER_ID, name: 'General Ledger', created_at: scope.now, meta_data: {} };
    return emitted(scope, ledger, { type: 'ledger.created', at: scope.now, ledgers: [ledger] });
  },
};

const createLedger: Infallible<CommandOf<'ledger.create'>, LedgerRecord> = {
  rejections: [],
  decide(scope, command) {
    const ledger: LedgerRecord = { ledger_id: scope.ids.next('ldg'), name: command.name, created_at: scope.now, meta_data: command.meta_data };
    return emitted(scope, ledger, { type: 'ledger.created', at: scope.now, ledgers: [ledger] });
  },
};

const updateLedger: Decision<CommandOf<'ledger.update'>, LedgerRecord> = {
  rejections: ['LGR_NOT_FOUND', 'META_TOO_LARGE'],
  decide(scope, command) {
    const current = scope.state.ledgers.get(command.ledger_id);
    if (!current) return refuse(reject('LGR_NOT_FOUND', `ledger ${command.ledger_id} not found`));
    const renamed: LedgerRecord = { ...current, name: command.name ?? current.name };
    const event: LedgerEvent = { type: 'ledger.updated', at: scope.now, ledgers: [renamed] };
    if (!command.meta_data) return emitted(scope, renamed, event);
    // The name goes in the record, the metadata as a patch (metadata.ts: the log keeps patches).
    const ledger = { ...renamed, meta_data: mergeMetaData(current.meta_data, command.meta_data) };
    const refusal = metadataSizeRefusal(ledger.meta_data);
    if (refusal) return refuse(refusal);
    event.metadata_patches = [{ entity_id: ledger.ledger_id, meta_data: command.meta_data }];
    return emitted(scope, ledger, event);
  },
};

const createBalance: Decision<CommandOf<'balance.create'>, BalanceRecord> = {
  rejections: ['LGR_NOT_FOUND', 'IDT_NOT_FOUND', 'BAL_DUPLICATE_INDICATOR'],
  decide(scope, command) {
    const { state } = scope;
    if (!state.ledgers.has(command.ledger_id)) return refuse(reject('LGR_NOT_FOUND', `ledger ${command.ledger_id} not found`));
    if (command.identity_id !== '' && !state.identities.has(command.identity_id)) {
      return refuse(reject('IDT_NOT_FOUND', `identity ${command.identity_id} not found`));
    }
    if (command.indicator !== '' && state.balanceByIndicator(command.indicator, command.currency)) {
      return refuse(reject('BAL_DUPLICATE_INDICATOR', `a ${command.currency} balance named ${command.indicator} exists`));
    }
    // Blnk's rule: lineage is tracked per identity (the edge says so first, naming the field).
    if (command.track_fund_lineage && command.identity_id === '') {
      return refuse(reject('IDT_NOT_FOUND', 'identity_id is required when track_fund_lineage is enabled'));
    }
    const lineage = { track_fund_lineage: command.track_fund_lineage ?? false, allocation_strategy: command.allocation_strategy ?? 'FIFO' } as const;
    const balance = newBalance(
      scope.ids.next('bln'), command.ledger_id, command.currency, command.indicator, command.identity_id, command.meta_data, scope.now, lineage,
    );
    return emitted(scope, balance, { type: 'balance.created', at: scope.now, balances: [balance] });
  },
};

/** Gives a balance to an identity (Blnk's PUT /balances/:id/identity); answers the balance as it will be. */
const setBalanceIdentity: Decision<CommandOf<'balance.set_identity'>, BalanceRecord> = {
  rejections: ['BAL_NOT_FOUND', 'IDT_NOT_FOUND'],
  decide(scope, command) {
    const balance = scope.state.balances.get(command.balance_id);
    if (!balance) return refuse(reject('BAL_NOT_FOUND', `balance ${command.balance_id} not found`));
    if (!scope.state.identities.has(command.identity_id)) return refuse(reject('IDT_NOT_FOUND', `identity ${command.identity_id} not found`));
    const event: LedgerEvent = {
      type: 'balance.identity_updated', at: scope.now, balance_identities: [{ balance_id: command.balance_id, identity_id: command.identity_id }],
    };
    return emitted(scope, { ...balance, identity_id: command.identity_id }, event);
  },
};

/** Last uses of API keys gathered over a while, as one event; answers how many keys it updates. */
const recordApiKeysUsed: Infallible<CommandOf<'api_key.record_use'>, number> = {
  rejections: [],
  decide(scope, command) {
    const event = decideApiKeysUsed(scope.state, new Map(command.used_at), scope.now);
    if (!event) return accept(0);
    return emitted(scope, event.api_keys?.length ?? 0, event);
  },
};

/** Secrets for hooks from before per-hook secrets, in one event; answers how many hooks it gave one. */
const issueHookSecrets: Infallible<CommandOf<'hook.issue_secrets'>, number> = {
  rejections: [],
  decide(scope, command) {
    const event = decideIssueHookSecrets(scope.state, new Map(command.sealed_by_hook_id), scope.now);
    if (!event) return accept(0);
    return emitted(scope, event.hooks?.length ?? 0, event);
  },
};

/** Failures of the server's own work, as one event that changes no state; answers how many. */
const recordSystemErrors: Infallible<CommandOf<'system.record_errors'>, number> = {
  rejections: [],
  decide(scope, command) {
    if (command.messages.length === 0) return accept(0);
    return emitted(scope, command.messages.length, {
      type: 'system.error', at: scope.now, system_errors: command.messages.map((message) => ({ message })),
    });
  },
};

/** A run's results, marks and completion: several events, committed in one log record by `run`. */
const completeReconciliation: Decision<CommandOf<'reconciliation.complete'>, ReconciliationRecord> = {
  rejections: ['RECON_NOT_FOUND', 'GEN_CONFLICT'],
  decide(scope, command) {
    const decided = decideCompleteReconciliation(scope.state, command.reconciliation_id, command.results, scope.now);
    if (!decided.ok) return decided;
    for (const event of decided.value.events) scope.emit(event);
    return accept(decided.value.record);
  },
};

const processQueued: Work<CommandOf<'queue.process'>, number> = {
  rejections: [],
  work: (pending, command) => pending.processQueued(command.items_max),
};

const recoverQueued: Work<CommandOf<'queue.recover'>, number> = {
  rejections: [],
  work: (pending, command) => pending.recoverQueued(command.cutoff),
};

const fireTimers: Work<CommandOf<'timers.fire'>, number> = {
  rejections: [],
  work: (pending, _command, now) => pending.fireDueTimers(now),
};

/** Every command's operation. */
export const OPERATIONS = {
  'genesis.ensure': genesis,
  'ledger.create': createLedger,
  'ledger.update': updateLedger,
  'period.close': closePeriodOperation,
  'balance.create': createBalance,
  'balance.set_identity': setBalanceIdentity,
  'transaction.create': createOperation,
  'transaction.bulk': bulkOperation,
  'transaction.refund': refundOperation,
  'hold.act': inflightActionOperation,
  'hold.act_on_batch': batchActionOperation,
  'hold.act_on_many': manyActionsOperation,
  'queue.process': processQueued,
  'queue.recover': recoverQueued,
  'timers.fire': fireTimers,
  'identity.create': registry(['GEN_CONFLICT'], (scope, command: CommandOf<'identity.create'>) =>
    decideCreateIdentity(scope.state, command.fields, command.identity_id, scope.now, scope.ids)),
  'identity.update': registry(['IDT_NOT_FOUND', 'GEN_CONFLICT'], (scope, command: CommandOf<'identity.update'>) =>
    decideUpdateIdentity(scope.state, command.identity_id, command.fields, scope.now, command.expected)),
  'identity.delete': registry(['IDT_NOT_FOUND', 'GEN_CONFLICT'], (scope, command: CommandOf<'identity.delete'>) =>
    decideDeleteIdentity(scope.state, command.identity_id, scope.now)),
  'metadata.update': registry(['META_UNSUPPORTED_ENTITY', 'META_ENTITY_NOT_FOUND', 'META_TOO_LARGE'], (scope, command: CommandOf<'metadata.update'>) =>
    decideMetadata(scope.state, command.entity_id, command.meta_data, scope.now)),
  'api_key.create': registry([], (scope, command: CommandOf<'api_key.create'>) => decideCreateApiKey(command.fields, scope.ids.next('key'), scope.now)),
  'api_key.revoke': registry(['APIKEY_NOT_FOUND'], (scope, command: CommandOf<'api_key.revoke'>) =>
    decideRevokeApiKey(scope.state, command.api_key_id, scope.now)),
  'api_key.record_use': recordApiKeysUsed,
  'system.record_errors': recordSystemErrors,
  'hook.create': registry([], (scope, command: CommandOf<'hook.create'>) =>
    decideCreateHook(command.fields, command.signing_secret_sealed, scope.now, scope.ids)),
  'hook.update': registry(['HOOK_NOT_FOUND'], (scope, command: CommandOf<'hook.update'>) =>
    decideUpdateHook(scope.state, command.hook_id, command.fields, scope.now)),
  'hook.rotate_secret': registry(['HOOK_NOT_FOUND'], (scope, command: CommandOf<'hook.rotate_secret'>) =>
    decideRotateHookSecret(scope.state, command.hook_id, command.signing_secret_sealed, scope.now)),
  'hook.issue_secrets': issueHookSecrets,
  'hook.delete': registry(['HOOK_NOT_FOUND'], (scope, command: CommandOf<'hook.delete'>) => decideDeleteHook(scope.state, command.hook_id, scope.now)),
  'monitor.create': registry(['BAL_NOT_FOUND', 'BAL_MONITOR_LIMIT_EXCEEDED'], (scope, command: CommandOf<'monitor.create'>) =>
    decideCreateMonitor(scope.state, command.fields, scope.now, scope.ids)),
  'monitor.update': registry(['BAL_MONITOR_NOT_FOUND', 'BAL_NOT_FOUND', 'BAL_MONITOR_LIMIT_EXCEEDED'], (scope, command: CommandOf<'monitor.update'>) =>
    decideUpdateMonitor(scope.state, command.monitor_id, command.fields, scope.now)),
  'monitor.delete': registry(['BAL_MONITOR_NOT_FOUND'], (scope, command: CommandOf<'monitor.delete'>) =>
    decideDeleteMonitor(scope.state, command.monitor_id, scope.now)),
  'matching_rule.create': registry(['RECON_RULE_INVALID'], (scope, command: CommandOf<'matching_rule.create'>) =>
    decideCreateMatchingRule(command.rule, scope.now, scope.ids)),
  'matching_rule.update': registry(['RECON_RULE_NOT_FOUND', 'RECON_RULE_INVALID'], (scope, command: CommandOf<'matching_rule.update'>) =>
    decideUpdateMatchingRule(scope.state, command.rule_id, command.rule, scope.now)),
  'matching_rule.delete': registry(['RECON_RULE_NOT_FOUND'], (scope, command: CommandOf<'matching_rule.delete'>) =>
    decideDeleteMatchingRule(scope.state, command.rule_id, scope.now)),
  'reconciliation.upload': registry([], (scope, command: CommandOf<'reconciliation.upload'>) => decideUpload(command.upload, scope.now, scope.ids)),
  'reconciliation.start': registry(['RECON_UPLOAD_NOT_FOUND', 'RECON_RULE_NOT_FOUND', 'RECON_RULE_INVALID'], (scope, command: CommandOf<'reconciliation.start'>) =>
    decideStartReconciliation(scope.state, command, scope.now, scope.ids)),
  'reconciliation.progress': registry(['RECON_NOT_FOUND', 'GEN_CONFLICT'], (scope, command: CommandOf<'reconciliation.progress'>) =>
    decideReconciliationProgress(scope.state, command.reconciliation_id, command.processed, scope.now)),
  'reconciliation.resume': registry(['RECON_NOT_FOUND', 'GEN_CONFLICT'], (scope, command: CommandOf<'reconciliation.resume'>) =>
    decideResumeReconciliation(scope.state, command.reconciliation_id, scope.now)),
  'reconciliation.fail': registry(['RECON_NOT_FOUND', 'GEN_CONFLICT'], (scope, command: CommandOf<'reconciliation.fail'>) =>
    decideFailReconciliation(scope.state, command.reconciliation_id, command.reason, scope.now)),
  'reconciliation.complete': completeReconciliation,
} satisfies { [K in CommandOp]: Operation<CommandOf<K>, unknown> };

export type Operations = typeof OPERATIONS;

/** What running a command answers (its operation's value). */
export type ResultOf<K extends CommandOp> = Operations[K] extends { decide(...args: never[]): Decided<infer T> }
  ? T
  : Operations[K] extends { work(...args: never[]): infer T } ? T : never;

/** The commands never refused: the engine's own work, and decisions that record what they are given. */
export type NeverRefusedOp = {
  [K in CommandOp]: Operations[K] extends { work: unknown } ? K : Operations[K] extends { rejections: readonly [] } ? K : never;
}[CommandOp];

/** The commands whose operation has a dry run. */
export type DryRunOp = { [K in CommandOp]: Operations[K] extends { dryRun: object } ? K : never }[CommandOp];

/** The codes a command's operation can refuse with, for the API reference of the routes that send it. */
export function rejectionsOf(op: CommandOp): readonly RejectionCode[] {
  return OPERATIONS[op].rejections;
}
