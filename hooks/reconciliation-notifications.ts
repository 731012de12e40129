// Notifications of reconciliation runs for the server's notification webhook (notifications.ts): a run
// that completes or fails is announced as `reconciliation.completed` or `reconciliation.failed` with the
// run's record as GET /reconciliation/:id shows it. Derived from the logged event that ends the run, so
// the announcement goes out once that event is durable and is never lost to a crash. Transaction hooks
// never see these events (hook-deliveries.ts takes `transaction.*` events only). Dry runs write no
// events, so they are never announced.

import type { LedgerEvent } from '../engine/events.js';
import { reconciliationView } from '../wire/reconciliation-views.js';
import type { NotificationDeriver, NotificationDraft } from './notification-draft.js';

export const reconciliationNotifications: NotificationDeriver = (event: LedgerEvent): NotificationDraft[] => {
  if (event.type !== 'reconciliation.completed' && event.type !== 'reconciliation.failed') return [];
  return (event.reconciliations ?? []).map((run) => ({ name: event.type, data: reconciliationView(run) }));
};
