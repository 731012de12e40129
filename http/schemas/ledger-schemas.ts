// Request bodies for ledgers (and their closed periods) and balances.

import { z } from 'zod';
import type { CreateBalanceCommand, CreateLedgerCommand } from '../../engine/commands.js';
import { ALLOCATION_STRATEGIES, type AllocationStrategy } from '../../engine/fund-allocation.js';
import { GENERAL_LEDGER_ID } from '../../engine/records.js';
import { currencySchema, identifierSchema, NAME_LENGTH_MAX, optionalMetaData } from './common-schemas.js';
import { parseTimeInput } from './time-input.js';


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

/** Closing a ledger's period: `closes_at` as every time on the wire (RFC 3339, or `YYYY-MM-DD hh:mm:ss` UTC). */
export const closePeriodSchema = z.object({
  closes_at: z.string().max(64).transform((text, context) => {
    const parsed = parseTimeInput(text);
    if (!parsed.ok) {
      context.addIssue({ code: 'custom', message: parsed.rejection.message });
      return z.NEVER;
    }
    // 0 and earlier mean "none" wherever a time is kept (effective dates too): a period ends after 1970.
    if (parsed.value <= 0) {
      context.addIssue({ code: 'custom', message: 'must be a time after 1970-01-01T00:00:00Z' });
      return z.NEVER;
    }
    return parsed.value;
  }),
});

/** An indicator names a balance of the general ledger: `@` and no whitespace (`@cash`). */
const INDICATOR_PATTERN = /^@\S+$/;

/**
 * A new balance, with Blnk's rules: an indicator (trimmed) only in the general ledger and shaped like
 * `@name`; an allocation strategy (trimmed, any case) one of FIFO, LIFO, PROPORTIONAL; lineage tracking
 * only for a balance with an identity.
 */
export const createBalanceSchema = z
  .object({
    ledger_id: identifierSchema,
    currency: currencySchema,
    identity_id: z.string().max(128).optional(),
    indicator: z.string().max(NAME_LENGTH_MAX).optional().transform((value) => value?.trim()),
    allocation_strategy: z.string().max(32).optional().transform((value) => value?.trim().toUpperCase()),
    track_fund_lineage: z.boolean().optional(),
    meta_data: optionalMetaData,
  })
  .superRefine((input, context) => {
    const issue = (path: string, message: string): void => {
      context.addIssue({ code: 'custom', path: [path], message });
    };
    if (input.indicator) {
      if (input.ledger_id !== GENERAL_LEDGER_ID) issue('indicator', 'indicator is only allowed for General Ledger balances (ledger_id = general_ledger_id)');
      else if (!INDICATOR_PATTERN.test(input.indicator)) issue('indicator', "indicator must start with '@' and contain no whitespace (e.g. '@cash')");
    }
    if (input.allocation_strategy && !isAllocationStrategy(input.allocation_strategy)) {
      issue('allocation_strategy', 'allocation_strategy must be one of: FIFO, LIFO, PROPORTIONAL');
    }
    if (input.track_fund_lineage && !input.identity_id) issue('identity_id', 'identity_id is required when track_fund_lineage is enabled');
  })
  .transform((input): CreateBalanceCommand => {
    const command: CreateBalanceCommand = {
      ledger_id: input.ledger_id,
      currency: input.currency,
      identity_id: input.identity_id ?? '',
      indicator: input.indicator ?? '',
      meta_data: input.meta_data ?? {},
    };
    if (input.track_fund_lineage) command.track_fund_lineage = true;
    if (input.allocation_strategy && isAllocationStrategy(input.allocation_strategy)) command.allocation_strategy = input.allocation_strategy;
    return command;
  });

function isAllocationStrategy(text: string): text is AllocationStrategy {
  return (ALLOCATION_STRATEGIES as readonly string[]).includes(text);
}
