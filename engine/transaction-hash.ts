// The per-row fingerprint of a transaction: SHA-256 (hex) of the canonical JSON array
// [precise_amount, reference, currency, source, destination]. The array form keeps the fields apart
// whatever characters a reference holds. It is decided once, before logging, and carried in the record.

import { hash } from 'node:crypto';

export interface HashedFields {
  precise_amount: bigint;
  reference: string;
  currency: string;
  source: string;
  destination: string;
}

export function transactionHash(fields: HashedFields): string {
  const text = JSON.stringify([
    fields.precise_amount.toString(),
    fields.reference,
    fields.currency,
    fields.source,
    fields.destination,
  ]);
  return hash('sha256', text, 'hex');
}
