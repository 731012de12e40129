// What a delivery sends: the body `{event, hook_type, data}` (data is the transaction as GET
// /transactions/:id shows it, exact amounts as digits), or `{event, data}` for the notification
// webhook, and the headers that let a receiver check it:
//   X-Folio-Signature  hex HMAC-SHA256 of `<timestamp>.<body>` keyed with the hook's signing secret (or
//                      the notification webhook's)
//   X-Folio-Timestamp  Unix seconds when the attempt was made (signed, so a receiver can refuse replays)
//   X-Blnk-Signature, X-Blnk-Timestamp  the same signature and timestamp under Blnk's names (Blnk signs
//                      `<timestamp>.<body>` with HMAC-SHA256 in hex too), so a receiver written for
//                      Blnk verifies a delivery with its own secret, unchanged
//   X-Hook-ID, X-Hook-Type (hooks only, as Blnk names them), X-Event-ID (the same on every attempt)
//   and, for the notification webhook, the headers its configuration names (Blnk's webhook headers)
// Without a secret there is nothing to sign with, and the signature headers are left out.

import { createHmac } from 'node:crypto';
import type { HookType, TransactionRecord } from '../engine/records.js';
import { toJsonText } from '../wire/json-text.js';
import { transactionJson } from '../wire/transaction-json.js';
import { hookEventName } from './hook-deliveries.js';

export function hookBody(record: TransactionRecord, type: HookType): string {
  return toJsonText({ event: hookEventName(record.status), hook_type: type, data: transactionJson(record) });
}

/** The body of a notification webhook delivery. */
export function notificationBody(name: string, data: unknown): string {
  return toJsonText({ event: name, data });
}

export function hookSignature(secretKey: string, timestamp: string, body: string): string {
  return createHmac('sha256', secretKey).update(`${timestamp}.${body}`).digest('hex');
}

/** Who a delivery goes to: a registered hook (its id and type), or the notification webhook (its configured headers). */
export interface DeliveryTarget {
  hookId?: string;
  hookType?: HookType;
  headers?: Readonly<Record<string, string>>;
}

/** Headers of one attempt. Configured headers come first, so none of them can replace a signature header. */
export function hookHeaders(secretKey: string, target: DeliveryTarget, eventId: string, body: string, nowMs: number): Record<string, string> {
  const timestamp = String(Math.floor(nowMs / 1000));
  const headers: Record<string, string> = { ...target.headers };
  headers['content-type'] = 'application/json';
  headers['x-folio-timestamp'] = timestamp;
  headers['x-blnk-timestamp'] = timestamp;
  headers['x-event-id'] = eventId;
  if (target.hookId !== undefined) headers['x-hook-id'] = target.hookId;
  if (target.hookType !== undefined) headers['x-hook-type'] = target.hookType;
  if (secretKey !== '') {
    const signature = hookSignature(secretKey, timestamp, body);
    headers['x-folio-signature'] = signature;
    headers['x-blnk-signature'] = signature;
  }
  return headers;
}
