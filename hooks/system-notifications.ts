// `system.error` for the notification webhook (notifications.ts): each failure of the server's own work
// that a `system.error` event records (engine recordSystemErrors: a hook delivery given up, the index
// stuck on an event), with Blnk's payload `{error, time}`, time being when the event was logged.

import type { LedgerEvent } from '../engine/events.js';
import { timeText } from '../wire/views.js';
import type { NotificationDraft } from './notification-draft.js';

export function systemErrorNotifications(event: LedgerEvent): NotificationDraft[] {
  if (event.type !== 'system.error') return [];
  return (event.system_errors ?? []).map((failure) => ({ name: 'system.error', data: { error: failure.message, time: timeText(event.at) } }));
}
