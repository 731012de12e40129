// What a page gets from the router, and the parts several pages share: the route in the address
// (`#/balances?ledger_id=...&offset=20`, so every page can be shared and reloaded), and the filter form
// over the API's own filter fields and operators (POST /<collection>/filter).

import { el, field, input, replace, select, type Child } from './dom.js';

export interface PageContext {
  /** Where the page draws. */
  main: HTMLElement;
  /** The route's parameters (`/balances/:id` -> [id]). */
  params: string[];
  query: URLSearchParams;
  /** Aborted when the person leaves the page: every call and timer of the page listens to it. */
  signal: AbortSignal;
  /** Runs when the page is left (charts, streams, timers). */
  onLeave(cleanup: () => void): void;
  /** Sets the page's heading and the document's title; returns the heading. */
  heading(title: string, ...after: Child[]): HTMLElement;
  /** Draws the page again from the API (after a write). */
  reload(): void;
}

/** The address of a route with a query (empty values left out). */
export function routeWith(path: string, query: Record<string, string | string[] | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === '') continue;
    for (const item of Array.isArray(value) ? value : [value]) params.append(name, String(item));
  }
  const text = params.toString();
  return text === '' ? path : `${path}?${text}`;
}

export function go(route: string): void {
  location.hash = `#${route}`;
}

/** A whole number from the query string, within bounds. */
export function queryNumber(query: URLSearchParams, name: string, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  const value = Number(query.get(name) ?? '');
  return Number.isSafeInteger(value) && value >= 0 && value <= max ? value : fallback;
}

export type FieldType = 'text' | 'amount' | 'time' | 'integer' | 'boolean';

/** The fields the API filters a collection on (its field catalogue), and their types. */
export const FILTER_FIELDS: Record<'ledgers' | 'balances' | 'transactions', Array<[string, FieldType]>> = {
  ledgers: [['ledger_id', 'text'], ['name', 'text'], ['created_at', 'time']],
  balances: [
    ['balance_id', 'text'], ['ledger_id', 'text'], ['identity_id', 'text'], ['indicator', 'text'], ['currency', 'text'], ['balance', 'amount'],
    ['credit_balance', 'amount'], ['debit_balance', 'amount'], ['inflight_balance', 'amount'], ['inflight_credit_balance', 'amount'],
    ['inflight_debit_balance', 'amount'], ['available_balance', 'amount'], ['version', 'integer'], ['created_at', 'time'],
  ],
  transactions: [
    ['transaction_id', 'text'], ['balance_id', 'text'], ['parent_transaction', 'text'], ['source', 'text'], ['destination', 'text'],
    ['reference', 'text'], ['currency', 'text'], ['precise_amount', 'amount'], ['precision', 'amount'], ['description', 'text'], ['status', 'text'],
    ['hash', 'text'], ['allow_overdraft', 'boolean'], ['inflight', 'boolean'], ['skip_queue', 'boolean'], ['created_at', 'time'],
    ['scheduled_for', 'time'], ['inflight_expiry_date', 'time'], ['inflight_commit_date', 'time'], ['batch_id', 'text'],
  ],
};

/** The sortable (indexed) fields of each collection. */
export const SORT_FIELDS: Record<'ledgers' | 'balances' | 'transactions', string[]> = {
  ledgers: ['created_at', 'name', 'ledger_id'],
  balances: ['created_at', 'balance', 'currency', 'indicator', 'ledger_id', 'identity_id', 'balance_id'],
  transactions: ['created_at', 'precise_amount', 'reference', 'status', 'currency', 'source', 'destination', 'transaction_id'],
};

export const OPERATORS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'between', 'like', 'ilike', 'isnull', 'isnotnull'] as const;

export interface Condition {
  field: string;
  operator: string;
  /** As typed: `in` takes values separated by commas, `between` two of them. */
  value: string;
}

/** Conditions from the address: each `f=<field>:<operator>:<value>`. */
export function conditionsOf(query: URLSearchParams): Condition[] {
  return query.getAll('f').map((text) => {
    const [fieldName = '', operator = 'eq', ...rest] = text.split(':');
    return { field: fieldName, operator, value: rest.join(':') };
  }).filter((condition) => condition.field !== '');
}

export function conditionText(condition: Condition): string {
  return `${condition.field}:${condition.operator}:${condition.value}`;
}

function typedValue(type: FieldType | undefined, text: string): unknown {
  const trimmed = text.trim();
  if (type === 'boolean') return trimmed === 'true' ? true : trimmed === 'false' ? false : trimmed;
  if (type === 'integer' && /^-?\d+$/.test(trimmed) && Number.isSafeInteger(Number(trimmed))) return Number(trimmed);
  // Amounts go as strings of digits, which the API reads exactly; anything else as typed, for the API to judge.
  return trimmed;
}

/** A condition as the filter API takes it. */
export function apiCondition(collection: keyof typeof FILTER_FIELDS, condition: Condition): Record<string, unknown> {
  const type = FILTER_FIELDS[collection].find(([name]) => name === condition.field)?.[1];
  if (condition.operator === 'isnull' || condition.operator === 'isnotnull') return { field: condition.field, operator: condition.operator };
  if (condition.operator === 'in' || condition.operator === 'between') {
    return { field: condition.field, operator: condition.operator, values: condition.value.split(',').map((item) => typedValue(type, item)) };
  }
  return { field: condition.field, operator: condition.operator, value: typedValue(type, condition.value) };
}

/**
 * The filter form: rows of field, operator and value, `and`/`or`, the sort; submitting it puts them in
 * the address (so the filtered page can be shared), which loads the page again.
 */
export function filterForm(
  collection: keyof typeof FILTER_FIELDS,
  query: URLSearchParams,
  apply: (conditions: Condition[], logical: string, sortBy: string, sortOrder: string) => void,
): HTMLElement {
  const rows = el('div', { class: 'conditions' });
  const fieldOptions: Array<[string, string]> = FILTER_FIELDS[collection].map(([name]) => [name, name]);
  const operatorOptions: Array<[string, string]> = OPERATORS.map((operator) => [operator, operator]);
  const addRow = (condition: Condition): void => {
    const fieldSelect = select('field', fieldOptions, condition.field);
    const operatorSelect = select('operator', operatorOptions, condition.operator);
    const value = input('value', condition.value, { type: 'text', placeholder: 'value (in: a,b; between: low,high)' });
    const remove = el('button', { attrs: { type: 'button', 'aria-label': 'Remove this condition' } }, '✕');
    const row = el('fieldset', { class: 'condition' }, el('legend', { class: 'visually-hidden' }, 'Condition'),
      field('Field', fieldSelect), field('Operator', operatorSelect), field('Value', value), remove);
    remove.addEventListener('click', () => row.remove());
    rows.append(row);
  };
  for (const condition of conditionsOf(query)) addRow(condition);
  const logical = select('logical_operator', [['and', 'all conditions (and)'], ['or', 'any condition (or)']], query.get('op') ?? 'and');
  const sortBy = select('sort_by', SORT_FIELDS[collection].map((name) => [name, name]), query.get('sort') ?? 'created_at');
  const sortOrder = select('sort_order', [['desc', 'descending'], ['asc', 'ascending']], query.get('order') ?? 'desc');
  const form = el('form', { class: 'filters', attrs: { 'aria-label': `Filter ${collection}` } },
    rows,
    el('div', { class: 'filter-controls' },
      el('button', { attrs: { type: 'button' }, on: { click: () => addRow({ field: FILTER_FIELDS[collection][0]?.[0] ?? '', operator: 'eq', value: '' }) } }, '+ Condition'),
      field('Match', logical), field('Sort by', sortBy), field('Order', sortOrder),
      el('button', { class: 'primary', attrs: { type: 'submit' } }, 'Apply filters')));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const conditions: Condition[] = [...rows.querySelectorAll('fieldset.condition')].map((row) => ({
      field: (row.querySelector('[name=field]') as HTMLSelectElement).value,
      operator: (row.querySelector('[name=operator]') as HTMLSelectElement).value,
      value: (row.querySelector('[name=value]') as HTMLInputElement).value,
    }));
    apply(conditions, logical.value, sortBy.value, sortOrder.value);
  });
  return form;
}

/** A search box over the API's full-text search (POST /search/<collection>). */
export function searchForm(label: string, value: string, apply: (text: string) => void): HTMLElement {
  const box = input('q', value, { type: 'search', placeholder: 'text to find' });
  const form = el('form', { class: 'search', attrs: { role: 'search', 'aria-label': label } }, field(label, box), el('button', { attrs: { type: 'submit' } }, 'Search'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    apply(box.value.trim());
  });
  return form;
}

/** Clears a container and shows that it is loading. */
export function loading(container: HTMLElement): void {
  replace(container, el('p', { class: 'loading' }, 'Loading…'));
}
