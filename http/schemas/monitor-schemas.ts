// Request bodies of balance monitors, as Blnk takes them: `{balance_id, condition: {field, operator,
// value, precision}, description?, call_back_url?}`. The threshold is `value` in the units of
// `precision` (value 1000.5 at precision 100 is 100050 in the smallest unit), converted exactly like a
// transaction amount; `precise_value` may be sent instead. Negative thresholds are allowed (balances go
// below zero).

import { z } from 'zod';
import { MONITOR_FIELDS, MONITOR_OPERATORS, type MonitorFields } from '../../engine/balance-monitors.js';
import { amountToPrecise, parsePrecision, parsePreciseAmount, signed } from '../../wire/amounts.js';
import { DESCRIPTION_LENGTH_MAX, identifierSchema } from './common-schemas.js';
import { HOOK_URL_LENGTH_MAX } from '../access/access-schemas.js';
import { decimalInput, wholeNumberInput } from './transaction-schemas.js';

const conditionSchema = z.object({
  field: z.enum(MONITOR_FIELDS, { message: `must be one of ${MONITOR_FIELDS.join(', ')}` }),
  operator: z.enum(MONITOR_OPERATORS, { message: `must be one of ${MONITOR_OPERATORS.join(' ')}` }),
  value: decimalInput.optional(),
  precise_value: z.union([wholeNumberInput, z.string()]).optional(),
  precision: wholeNumberInput.optional(),
});

export const monitorSchema = z.object({
  balance_id: identifierSchema,
  condition: conditionSchema,
  description: z.string().max(DESCRIPTION_LENGTH_MAX).optional(),
  call_back_url: z.string().max(HOOK_URL_LENGTH_MAX).optional(),
}).transform((input, context): MonitorFields => {
  const threshold = thresholdOf(input.condition);
  if (typeof threshold === 'string') {
    context.addIssue({ code: 'custom', path: ['condition', threshold.startsWith('precision') ? 'precision' : 'value'], message: threshold });
    return z.NEVER;
  }
  return {
    balance_id: input.balance_id,
    description: input.description ?? '',
    call_back_url: input.call_back_url ?? '',
    condition: { field: input.condition.field, operator: input.condition.operator, ...threshold },
  };
});

type ConditionInput = z.output<typeof conditionSchema>;

/** The threshold in the smallest unit with its precision, or what is wrong with it. */
function thresholdOf(condition: ConditionInput): { precise_value: bigint; precision: bigint } | string {
  const precision = condition.precision === undefined ? { ok: true as const, value: 1n } : parsePrecision(condition.precision);
  if (!precision.ok) return `precision ${precision.rejection.message}`;
  if (condition.precise_value !== undefined) {
    const [negative, magnitude] = signed(condition.precise_value);
    const parsed = parsePreciseAmount(magnitude, { allowZero: true });
    if (!parsed.ok) return `precise_value ${parsed.rejection.message}`;
    return { precise_value: negative ? -parsed.value : parsed.value, precision: precision.value };
  }
  if (condition.value === undefined) return 'value is required';
  const [negative, magnitude] = signed(condition.value);
  const converted = amountToPrecise(magnitude, precision.value, { allowZero: true });
  if (!converted.ok) return `value ${converted.rejection.message}`;
  return { precise_value: negative ? -converted.value : converted.value, precision: precision.value };
}
