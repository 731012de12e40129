// What a delivery sends: the body `{event, hook_type, data}` (data is the transaction as GET
// /transactions/:id shows it, exact amounts as digits), or `{event, data}` for the notification
// webhook, and the headers that let a receiver check it:
//   X-Folio-Signature  hex HMAC-SHA256 of `<timestamp>.<body>` keyed with the hook's signing secret (or
//                      the notification webhook's)
//   X-Folio-Timestamp  Unix seconds when the attempt was made (signed, so a receiver can refuse replays)
//   X-Hook-ID (hooks only), X-Event-ID (the same on every attempt, for dedupe)
// Without a secret there is nothing to sign with, and the signature header is left out.

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

/** Headers of one attempt; `hookId` undefined for the notification webhook, which is no registered hook. */
export function hookHeaders(secretKey: string, hookId: string | undefined, eventId: string, body: string, nowMs: number): Record<string, string> {
  const timestamp = String(Math.floor(nowMs / 1000));
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-folio-timestamp': timestamp,
    'x-event-id': eventId,
  };
  if (hookId !== undefined) headers['x-hook-id'] = hookId;
  if (secretKey !== '') headers['x-folio-signature'] = hookSignature(secretKey, timestamp, body);
  return headers;
}
