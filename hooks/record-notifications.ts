// `ledger.created`, `balance.created` and `identity.created` for the notification webhook (notifications.ts),
// as Blnk sends them after each creation: the record as its GET route shows it. A balance counts as
// created whenever an event creates it, by request or because a transaction named a new `@indicator`
// (Blnk creates those through the same path and announces them too). The general ledger, made at a
// data directory's first start, is not announced (Blnk makes its own without a webhook either).

import type { LedgerEvent } from '../engine/events.js';
import { GENERAL_LEDGER_ID } from '../engine/records.js';
import { identityView } from '../wire/identity-view.js';
import { balanceView, ledgerView } from '../wire/views.js';
import type { NotificationDraft } from './notification-draft.js';

export function ledgerNotifications(event: LedgerEvent): NotificationDraft[] {
  if (event.type !== 'ledger.created' || !event.ledgers) return [];
  return event.ledgers
    .filter((ledger) => ledger.ledger_id !== GENERAL_LEDGER_ID)
    .map((ledger) => ({ name: 'ledger.created', data: ledgerView(ledger) }));
}

export function balanceNotifications(event: LedgerEvent): NotificationDraft[] {
  return (event.balances ?? []).map((balance) => ({ name: 'balance.created', data: balanceView(balance) }));
}

export function identityNotifications(event: LedgerEvent): NotificationDraft[] {
  if (event.type !== 'identity.created' || !event.identities) return [];
  return event.identities.map((identity) => ({ name: 'identity.created', data: identityView(identity) }));
}
