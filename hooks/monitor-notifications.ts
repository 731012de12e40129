// `balance.monitor` notifications: one per monitor an event fired (engine/balance-monitors.ts), its data
// the monitor as GET /balance-monitors/:id shows it (Blnk's payload) with the balance as the event left
// it under `balance`. Everything comes from the event, so the same log gives the same notifications.

import type { LedgerEvent } from '../engine/events.js';
import { balanceView, monitorView } from '../wire/views.js';
import type { NotificationDraft } from './notification-draft.js';

export function balanceMonitorNotifications(event: LedgerEvent): NotificationDraft[] {
  if (!event.monitor_alerts) return [];
  return event.monitor_alerts.map((alert) => ({
    name: 'balance.monitor',
    data: { ...monitorView(alert.monitor), balance: balanceView(alert.balance) },
  }));
}
