// Request shapes of reconciliation and their conversion to commands: matching rules, starting a run
// (background or instant), and paging through results. Codes follow the public Blnk ledger where it has
// one for the condition (RECON_RULE_INVALID for a bad rule, RECON_EXTERNAL_TXNS_REQUIRED,
// RECON_MATCHING_RULES_REQUIRED); other shape problems are GEN_VALIDATION_ERROR naming each field.

import { z } from 'zod';
import type { StartReconciliationCommand } from '../../engine/decide-reconciliation.js';
import type { RuleCommand } from '../../engine/matching-rules.js';
import {
  EXTERNAL_GROUPING_FIELDS,
  EXTERNAL_RECORDS_MAX,
  INTERNAL_GROUPING_FIELDS,
  RULE_CRITERIA_MAX,
  RUN_RULES_MAX,
  STRATEGIES,
  type ExternalRecord,
  type ReconciliationStrategy,
} from '../../engine/reconciliation-records.js';
import { decimalTextOf, DecimalLiteral } from '../../wire/amounts.js';
import { ApiError } from '../api-error.js';
import { DESCRIPTION_LENGTH_MAX, identifierSchema, NAME_LENGTH_MAX } from './common-schemas.js';
import { externalRecordFrom } from './external-records-input.js';
import { validate } from './validation.js';

const driftInput = z.union([z.number(), z.string().max(64), z.bigint(), z.instanceof(DecimalLiteral)]);

const ruleShape = z.object({
  name: z.string().max(NAME_LENGTH_MAX),
  description: z.string().max(DESCRIPTION_LENGTH_MAX).optional(),
  criteria: z.array(z.object({
    field: z.string().max(32),
    operator: z.string().max(32),
    allowable_drift: driftInput.optional(),
  })).max(RULE_CRITERIA_MAX),
});

/** A rule body as a command; any problem with it is RECON_RULE_INVALID, naming the fields. */
export function ruleCommandFrom(body: unknown): RuleCommand {
  const shape = withCode('RECON_RULE_INVALID', () => validate(ruleShape, body));
  return {
    name: shape.name,
    description: shape.description ?? '',
    criteria: shape.criteria.map((criterion) => {
      const command: RuleCommand['criteria'][number] = { field: criterion.field, operator: criterion.operator };
      if (criterion.allowable_drift !== undefined) command.allowable_drift = decimalTextOf(criterion.allowable_drift) ?? '';
      return command;
    }),
  };
}

const runShape = {
  strategy: z.string().max(32),
  grouping_criteria: z.string().max(64).optional(),
  matching_rule_ids: z.array(identifierSchema).max(RUN_RULES_MAX).optional(),
  dry_run: z.boolean().optional(),
};

const startShape = z.object({ upload_id: identifierSchema, ...runShape });
const instantShape = z.object({ external_transactions: z.array(z.unknown()).optional(), ...runShape });

export interface RunBody {
  strategy: ReconciliationStrategy;
  grouping_criteria: string;
  matching_rule_ids: string[];
  dry_run: boolean;
}

export function startCommandFrom(body: unknown): StartReconciliationCommand & { dry_run: boolean } {
  const shape = validate(startShape, body);
  return { upload_id: shape.upload_id, ...runBodyFrom(shape) };
}

export function instantRequestFrom(body: unknown): RunBody & { records: ExternalRecord[] } {
  const raw = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).external_transactions : undefined;
  if (raw === undefined || raw === null || (Array.isArray(raw) && raw.length === 0)) {
    throw new ApiError('RECON_EXTERNAL_TXNS_REQUIRED', 'external_transactions is required');
  }
  if (Array.isArray(raw) && raw.length > EXTERNAL_RECORDS_MAX) {
    throw new ApiError('GEN_VALIDATION_ERROR', `too many external_transactions; max is ${EXTERNAL_RECORDS_MAX}`, {
      external_transactions: `at most ${EXTERNAL_RECORDS_MAX} items`,
    });
  }
  const shape = validate(instantShape, body);
  const run = runBodyFrom(shape);
  return { ...run, records: recordsFrom(shape.external_transactions ?? []) };
}

function runBodyFrom(shape: { strategy: string; grouping_criteria?: string | undefined; matching_rule_ids?: string[] | undefined; dry_run?: boolean | undefined }): RunBody {
  if (shape.matching_rule_ids === undefined || shape.matching_rule_ids.length === 0) {
    throw new ApiError('RECON_MATCHING_RULES_REQUIRED', 'matching_rule_ids is required');
  }
  if (!(STRATEGIES as readonly string[]).includes(shape.strategy)) {
    throw invalid('strategy', `must be one of ${STRATEGIES.join(', ')}`);
  }
  const strategy = shape.strategy as ReconciliationStrategy;
  return { strategy, grouping_criteria: groupingFor(strategy, shape.grouping_criteria), matching_rule_ids: shape.matching_rule_ids, dry_run: shape.dry_run ?? false };
}

/** The grouping field a strategy needs: none for one_to_one, one of its own fields otherwise. */
function groupingFor(strategy: ReconciliationStrategy, given: string | undefined): string {
  if (strategy === 'one_to_one') return '';
  const allowed: readonly string[] = strategy === 'one_to_many' ? INTERNAL_GROUPING_FIELDS : EXTERNAL_GROUPING_FIELDS;
  if (given === undefined || given === '') throw invalid('grouping_criteria', `is required for ${strategy}: one of ${allowed.join(', ')}`);
  if (!allowed.includes(given)) {
    const side = strategy === 'one_to_many' ? 'a field of the ledger\'s transactions' : 'a field of the external records';
    throw invalid('grouping_criteria', `for ${strategy} must be ${side}: one of ${allowed.join(', ')}`);
  }
  return given;
}

/** The instant body's records; each bad one is named by its index and field. */
function recordsFrom(items: unknown[]): ExternalRecord[] {
  const details: Record<string, string> = {};
  const records: ExternalRecord[] = [];
  const seen = new Map<string, number>();
  items.forEach((item, index) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      details[`external_transactions.${index}`] ??= 'must be an object';
      return;
    }
    const result = externalRecordFrom(item as Record<string, unknown>);
    if (!result.ok) {
      details[`external_transactions.${index}.${result.field}`] ??= result.message;
      return;
    }
    const first = seen.get(result.record.id);
    if (first !== undefined) details[`external_transactions.${index}.id`] ??= `is already used by external_transactions.${first}`;
    seen.set(result.record.id, index);
    records.push(result.record);
  });
  const fields = Object.keys(details);
  if (fields.length > 0) {
    const shown = fields.slice(0, 10).map((field) => `${field}: ${details[field]}`).join('; ');
    throw new ApiError('GEN_VALIDATION_ERROR', `invalid request: ${shown}${fields.length > 10 ? `; and ${fields.length - 10} more` : ''}`, details);
  }
  return records;
}

function invalid(field: string, message: string): ApiError {
  return new ApiError('GEN_VALIDATION_ERROR', `invalid request: ${field}: ${message}`, { [field]: message });
}

/** Runs a validation whose failure must carry another code (the same message and details). */
function withCode<T>(code: 'RECON_RULE_INVALID', check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof ApiError && error.code === 'GEN_VALIDATION_ERROR') throw new ApiError(code, error.message, error.details);
    throw error;
  }
}

/** Paging through a run's results. */
export const RESULTS_LIMIT_DEFAULT = 100;
export const RESULTS_LIMIT_MAX = 1_000;

const pageNumber = (fallback: number, maximum: number) =>
  z.preprocess(
    (value) => (value === undefined || value === '' ? fallback : typeof value === 'string' ? Number(value) : value),
    z.number().int().min(0).max(maximum),
  );

export const resultsPageSchema = z.object({
  limit: pageNumber(RESULTS_LIMIT_DEFAULT, RESULTS_LIMIT_MAX).pipe(z.number().min(1)),
  offset: pageNumber(0, 10_000_000),
});
