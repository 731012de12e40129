// Events for the server's notification webhook (../shared/spec/decisions.md "Hooks": `notifications.webhook_url`),
// as opposed to the transaction hooks clients register. Like transaction hooks, they are derived from
// logged events by pure functions, so the log is their outbox too: a notification goes out only once
// the event that calls for it is durable, and reading the log again after a crash derives the same
// notifications with the same ids.
//
// Each kind of notification is one deriver: given a logged event, the notifications it calls for, each
// a name (`balance.monitor`, `reconciliation.completed`, ...) and the data to send. A feature adds its
// deriver to NOTIFICATION_DERIVERS (its shape is notification-draft.ts); the dispatcher (hook-dispatcher.ts) delivers them to the webhook
// with the same signing, retries, backoff and durable progress as hook deliveries.

import { hash } from 'node:crypto';
import type { LedgerEvent } from '../engine/events.js';
import type { NotificationDeriver, NotificationDraft } from './notification-draft.js';
import { reconciliationNotifications } from './reconciliation-notifications.js';
import { balanceMonitorNotifications } from './monitor-notifications.js';
import { balanceNotifications, identityNotifications, ledgerNotifications } from './record-notifications.js';
import { systemErrorNotifications } from './system-notifications.js';
import { bulkNotifications, transactionNotifications } from './transaction-notifications.js';

/** A notification in its place in the log. */
export interface Notification extends NotificationDraft {
  /** Position among the notifications of its event (part of its id). */
  index: number;
}

/** Where the notification webhook is and how it is delivered (config `notifications.*`). */
export interface NotificationTarget {
  url: string;
  /** Key of the HMAC signature; empty sends unsigned (and start-up warns). */
  secret: string;
  /** Headers the receiver expects on every delivery (Blnk's `notification.webhook.headers`), checked by server/config.ts. */
  headers?: Readonly<Record<string, string>>;
  /** Seconds per delivery attempt. */
  timeout_seconds: number;
  /** Further attempts after a failed delivery. */
  retry_count: number;
}

export const DEFAULT_NOTIFICATION_TIMEOUT_SECONDS = 10;
export const DEFAULT_NOTIFICATION_RETRY_COUNT = 5;

/**
 * Every kind of notification the server sends (Blnk's list of webhook events). Add a deriver here to
 * send a new kind; it is called for every logged event, so it should return early for events it does
 * not handle. New kinds go at the end: a notification's position among its event's notifications is part
 * of its id, so the ids of those already derived (and perhaps delivered) must not move.
 */
export const NOTIFICATION_DERIVERS: NotificationDeriver[] = [
  reconciliationNotifications, balanceMonitorNotifications,
  ledgerNotifications, balanceNotifications, identityNotifications, transactionNotifications, bulkNotifications, systemErrorNotifications,
];

/** The notifications an event calls for, in deriver order. */
export function notificationsIn(event: LedgerEvent, derivers: readonly NotificationDeriver[] = NOTIFICATION_DERIVERS): Notification[] {
  const notifications: Notification[] = [];
  for (const derive of derivers) {
    for (const draft of derive(event)) notifications.push({ ...draft, index: notifications.length });
  }
  return notifications;
}

/** The X-Event-ID of a notification: the same on every attempt and after any restart. */
export function notificationEventId(seq: number, notification: Notification): string {
  const digest = hash('sha256', `${seq}:${notification.index}:${notification.name}:notification`, 'hex');
  return `evt_${digest.slice(0, 32)}`;
}
