// Request bodies for ledgers and balances.

import { z } from 'zod';
import type { CreateBalanceCommand, CreateLedgerCommand } from '../engine/commands.js';
import { currencySchema, identifierSchema, NAME_LENGTH_MAX, optionalMetaData } from './common-schemas.js';


export const createLedgerSchema = z
  .object({
    name: z.string().min(1, 'must not be empty').max(NAME_LENGTH_MAX),
    meta_data: optionalMetaData,
  })
  .transform((input): CreateLedgerCommand => ({ name: input.name, meta_data: input.meta_data ?? {} }));

export const updateLedgerSchema = z.object({
  name: z.string().min(1, 'must not be empty').max(NAME_LENGTH_MAX).optional(),
  meta_data: optionalMetaData.transform((value) => value ?? undefined),
});

export const createBalanceSchema = z
  .object({
    ledger_id: identifierSchema,
    currency: currencySchema,
    identity_id: z.string().max(128).optional(),
    indicator: z.string().max(NAME_LENGTH_MAX).optional(),
    meta_data: optionalMetaData,
  })
  .transform((input): CreateBalanceCommand => ({
    ledger_id: input.ledger_id,
    currency: input.currency,
    identity_id: input.identity_id ?? '',
    indicator: input.indicator ?? '',
    meta_data: input.meta_data ?? {},
  }));
