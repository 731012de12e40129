// The list pages: ledgers, balances and transactions, each paged, filtered with the API's own filters
// (POST /<collection>/filter, counted) or searched with its full-text search (POST /search/<collection>).
// Everything the form holds is in the address, so a filtered page can be shared and reloaded. The
// balances page offers "Create a balance" when the key may write balances.

import { api } from './api.js';
import { amount, el, failureBox, field, input, link, pager, recordLink, replace, table, time, writeDialog, type Child, type Column } from './dom.js';
import { amountDigits } from './format.js';
import { apiCondition, conditionsOf, conditionText, filterForm, go, queryNumber, routeWith, searchForm, type PageContext } from './page.js';
import { ensurePrecisions, learnPrecisions, precisionOf } from './precision.js';
import type { Balance, FilterAnswer, Ledger, SearchAnswer, Transaction } from './records.js';
import { can } from './session.js';

/** Rows per page (the filter API's default page; it allows up to 100). */
export const PAGE_ROWS = 20;

type Collection = 'ledgers' | 'balances' | 'transactions';

interface ListSpec<Row> {
  collection: Collection;
  path: string;
  title: string;
  columns: Column<Row>[];
  /** Called with the rows of a page before they are drawn (to learn precisions). */
  prepare?: (rows: Row[], signal: AbortSignal) => Promise<void>;
}

/** One page of a collection, filtered or searched as the address says; the rows and how far they go. */
async function loadRows<Row>(spec: ListSpec<Row>, query: URLSearchParams, offset: number, signal: AbortSignal): Promise<{ rows: Row[]; total?: number }> {
  const text = query.get('q') ?? '';
  if (text !== '') {
    const answer = await api<SearchAnswer<Row>>('POST', `/search/${spec.collection}`, {
      body: { q: text, page: Math.floor(offset / PAGE_ROWS) + 1, per_page: PAGE_ROWS, sort_by: 'created_at:desc' }, signal,
    });
    return { rows: answer.hits.map((hit) => hit.document), total: answer.found };
  }
  const answer = await api<FilterAnswer<Row>>('POST', `/${spec.collection}/filter`, {
    body: {
      filters: conditionsOf(query).map((condition) => apiCondition(spec.collection, condition)),
      logical_operator: query.get('op') ?? 'and',
      sort_by: query.get('sort') ?? 'created_at',
      sort_order: query.get('order') ?? 'desc',
      limit: PAGE_ROWS, offset, include_count: true,
    },
    signal,
  });
  return { rows: answer.data, total: answer.total_count };
}

function listPage<Row>(ctx: PageContext, spec: ListSpec<Row>, actions: Child[] = []): void {
  const { query } = ctx;
  const offset = queryNumber(query, 'offset', 0);
  const same = (changes: Record<string, string | string[] | number | undefined>): Record<string, string | string[] | number | undefined> => ({
    q: query.get('q') ?? undefined, f: query.getAll('f'), op: query.get('op') ?? undefined, sort: query.get('sort') ?? undefined,
    order: query.get('order') ?? undefined, ...changes,
  });
  ctx.heading(spec.title, ...actions);
  const results = el('div', { class: 'results', attrs: { 'aria-live': 'polite', 'aria-busy': 'true' } }, el('p', { class: 'loading' }, 'Loading…'));
  ctx.main.append(
    searchForm(`Search ${spec.collection}`, query.get('q') ?? '', (text) => go(routeWith(spec.path, { q: text }))),
    el('details', { class: 'filter-box', attrs: query.getAll('f').length > 0 ? { open: '' } : {} }, el('summary', null, 'Filters and sort'),
      filterForm(spec.collection, query, (conditions, logical, sortBy, sortOrder) => go(routeWith(spec.path, {
        f: conditions.filter((condition) => condition.field !== '').map(conditionText), op: logical, sort: sortBy, order: sortOrder,
      })))),
    results,
  );
  void (async () => {
    try {
      const { rows, total } = await loadRows(spec, query, offset, ctx.signal);
      await spec.prepare?.(rows, ctx.signal);
      replace(results,
        table(spec.title, spec.columns, rows),
        pager(spec.title, { offset, limit: PAGE_ROWS, total, shown: rows.length }, (next) => go(routeWith(spec.path, same({ offset: next })))));
    } catch (error) {
      if (ctx.signal.aborted) return;
      replace(results, failureBox(error, `Loading ${spec.collection}`));
    } finally {
      results.setAttribute('aria-busy', 'false');
    }
  })();
}

export function ledgersPage(ctx: PageContext): void {
  listPage<Ledger>(ctx, {
    collection: 'ledgers', path: '/ledgers', title: 'Ledgers',
    columns: [
      { header: 'Name', cell: (ledger) => link(`/balances?f=${encodeURIComponent(`ledger_id:eq:${ledger.ledger_id}`)}`, ledger.name || '(no name)', `Balances of ${ledger.name || ledger.ledger_id}`) },
      { header: 'Ledger id', cell: (ledger) => el('code', null, ledger.ledger_id) },
      { header: 'Created', cell: (ledger) => time(ledger.created_at) },
    ],
  });
}

function balanceColumns(): Column<Balance>[] {
  const figure = (name: keyof Balance) => (balance: Balance): Child => amount(balance[name], precisionOf(balance.currency));
  return [
    { header: 'Balance id', cell: (balance) => recordLink(balance.balance_id) },
    { header: 'Indicator', cell: (balance) => balance.indicator || '—' },
    { header: 'Ledger', cell: (balance) => recordLink(balance.ledger_id) },
    { header: 'Currency', cell: (balance) => balance.currency },
    { header: 'Balance', cell: figure('balance'), numeric: true },
    { header: 'Available', cell: figure('available_balance'), numeric: true },
    { header: 'Inflight', cell: figure('inflight_balance'), numeric: true },
    { header: 'Created', cell: (balance) => time(balance.created_at) },
  ];
}

export function balancesPage(ctx: PageContext): void {
  const ledgerFilter = conditionsOf(ctx.query).find((condition) => condition.field === 'ledger_id' && condition.operator === 'eq')?.value ?? '';
  const actions: Child[] = can('balances', 'write')
    ? [el('button', { class: 'primary', attrs: { type: 'button' }, on: { click: () => createBalanceDialog(ledgerFilter) } }, 'Create a balance')]
    : [];
  listPage<Balance>(ctx, {
    collection: 'balances', path: '/balances', title: ledgerFilter ? `Balances of ${ledgerFilter}` : 'Balances', columns: balanceColumns(),
    prepare: (rows, signal) => ensurePrecisions(rows.map((balance) => balance.currency), signal),
  }, actions);
}

export function transactionColumns(perspective?: string): Column<Transaction>[] {
  const columns: Column<Transaction>[] = [
    { header: 'Created', cell: (transaction) => time(transaction.created_at) },
    { header: 'Transaction', cell: (transaction) => recordLink(transaction.transaction_id) },
    { header: 'Reference', cell: (transaction) => transaction.reference },
    { header: 'Status', cell: (transaction) => el('span', { class: `status status-${transaction.status.toLowerCase()}` }, transaction.status) },
  ];
  if (perspective) {
    columns.push(
      { header: 'Direction', cell: (transaction) => (transaction.destination === perspective ? 'in' : 'out') },
      { header: 'Counterparty', cell: (transaction) => recordLink(transaction.destination === perspective ? transaction.source : transaction.destination) },
      {
        header: 'Amount', numeric: true,
        cell: (transaction) => {
          const digits = amountDigits(transaction.precise_amount);
          return amount(transaction.destination === perspective || digits === '0' ? digits : `-${digits}`, amountDigits(transaction.precision), transaction.currency);
        },
      },
    );
  } else {
    columns.push(
      { header: 'Source', cell: (transaction) => recordLink(transaction.source) },
      { header: 'Destination', cell: (transaction) => recordLink(transaction.destination) },
      { header: 'Amount', numeric: true, cell: (transaction) => amount(transaction.precise_amount, amountDigits(transaction.precision), transaction.currency) },
    );
  }
  return columns;
}

export function transactionsPage(ctx: PageContext): void {
  listPage<Transaction>(ctx, {
    collection: 'transactions', path: '/transactions', title: 'Transactions', columns: transactionColumns(),
    prepare: async (rows) => learnPrecisions(rows),
  });
}

function createBalanceDialog(ledgerId: string): void {
  const ledger = input('ledger_id', ledgerId || 'general_ledger_id', { required: '', autocomplete: 'off' });
  const currency = input('currency', '', { required: '', autocomplete: 'off', placeholder: 'USD' });
  const identity = input('identity_id', '', { autocomplete: 'off' });
  let created = '';
  writeDialog({
    title: 'Create a balance',
    body: [
      el('p', null, 'POST /balances: a new balance in the ledger, at zero.'),
      field('Ledger id', ledger), field('Currency', currency), field('Identity id (optional)', identity),
    ],
    confirm: 'Create',
    run: async () => {
      const body: Record<string, unknown> = { ledger_id: ledger.value.trim(), currency: currency.value.trim() };
      if (identity.value.trim() !== '') body.identity_id = identity.value.trim();
      const balance = await api<Balance>('POST', '/balances', { body });
      created = balance.balance_id;
      return el('p', null, 'Created ', recordLink(balance.balance_id), '.');
    },
    done: () => go(`/balances/${encodeURIComponent(created)}`),
  });
}
