// One balance: its figures (GET /balances/:id?with_queued=true), its history as a chart with the balance
// as of the moment under the pointer (GET /balances/:id/history), the balance as of a moment a person
// types (GET /balances/:id/at), its movements paged (POST /transactions/filter on balance_id), its fund
// lineage by provider (GET /balances/:id/lineage) and its monitors (GET /balance-monitors/balances/:id).
// Amounts are formatted at the precision of the balance's own transactions (precision.ts).

import { api } from './api.js';
import { historyChart, pieChart } from './charts.js';
import { amount, append, el, facts, failureBox, field, fill, input, pager, recordLink, replace, section, settle, table, time, type Child } from './dom.js';
import { amountDigits } from './format.js';
import { transactionColumns, PAGE_ROWS } from './lists.js';
import { go, queryNumber, routeWith, type PageContext } from './page.js';
import { ensurePrecisions, learnPrecisions, precisionOf } from './precision.js';
import type { Balance, BalanceChange, BalanceHistory, BalanceLineage, FilterAnswer, Monitor, Transaction } from './records.js';

/** Changes the chart reads at most (ten pages of the history route's largest page). */
const HISTORY_CHANGES_MAX = 10_000;
const HISTORY_PAGE = 1_000;

export function balancePage(ctx: PageContext): void {
  const balanceId = ctx.params[0] ?? '';
  ctx.heading('Balance', ' ', el('code', null, balanceId));
  const figures = section('Figures');
  const history = section('History');
  const asOf = section('Balance as of a moment');
  const movements = section('Movements');
  const lineage = section('Fund lineage by provider');
  const monitors = section('Monitors');
  ctx.main.append(figures.element, history.element, asOf.element, movements.element, lineage.element, monitors.element);
  const movementOffset = queryNumber(ctx.query, 'offset', 0);

  void (async () => {
    // The movements teach the precision the figures are shown at: both are asked for at once.
    const movementsAnswer = api<FilterAnswer<Transaction>>('POST', '/transactions/filter', {
      body: { filters: [{ field: 'balance_id', operator: 'eq', value: balanceId }], sort_by: 'created_at', sort_order: 'desc', limit: PAGE_ROWS, offset: movementOffset, include_count: true },
      signal: ctx.signal,
    });
    movementsAnswer.catch(() => undefined);
    let balance: Balance;
    try {
      balance = await api<Balance>('GET', `/balances/${encodeURIComponent(balanceId)}`, { query: { with_queued: 'true' }, signal: ctx.signal });
    } catch (error) {
      if (ctx.signal.aborted) return;
      for (const part of [figures, history, asOf, movements, lineage, monitors]) settle(part.body, failureBox(error, 'Reading the balance'));
      return;
    }
    try {
      learnPrecisions((await movementsAnswer).data.filter((transaction) => transaction.currency === balance.currency));
    } catch {
      // shown in the movements section below
    }
    await ensurePrecisions([balance.currency], ctx.signal);
    const precision = precisionOf(balance.currency);
    showFigures(figures.body, balance, precision);
    void fill(history.body, () => loadHistory(ctx, balance, precision));
    asOfForm(asOf.body, balance, precision, ctx.signal);
    void fill(movements.body, async () => {
      const answer = await movementsAnswer;
      learnPrecisions(answer.data);
      return [
        table(`Movements of ${balanceId}`, transactionColumns(balanceId), answer.data),
        pager('Movements', { offset: movementOffset, limit: PAGE_ROWS, total: answer.total_count, shown: answer.data.length },
          (next) => go(routeWith(`/balances/${encodeURIComponent(balanceId)}`, { offset: next }))),
      ];
    });
    void fill(lineage.body, () => loadLineage(ctx, balance, precision));
    void fill(monitors.body, async () => {
      const found = await api<Monitor[]>('GET', `/balance-monitors/balances/${encodeURIComponent(balanceId)}`, { signal: ctx.signal });
      return table('Monitors', [
        { header: 'Monitor', cell: (monitor) => el('code', null, monitor.monitor_id) },
        { header: 'Condition', cell: (monitor) => el('span', null, `${monitor.condition.field} ${monitor.condition.operator} `, amount(monitor.condition.precise_value, amountDigits(monitor.condition.precision))) },
        { header: 'Description', cell: (monitor) => monitor.description || '—' },
        { header: 'Callback', cell: (monitor) => monitor.call_back_url || '—' },
        { header: 'Created', cell: (monitor) => time(monitor.created_at) },
      ], found, 'no monitors on this balance.');
    });
  })();
}

function showFigures(body: HTMLElement, balance: Balance, precision: string | undefined): void {
  const figure = (value: unknown): Child => (value === undefined ? '—' : amount(value, precision, balance.currency));
  settle(body,
    facts([
      ['Balance', figure(balance.balance)],
      ['Available', figure(balance.available_balance)],
      ['Credit', figure(balance.credit_balance)],
      ['Debit', figure(balance.debit_balance)],
      ['Inflight', figure(balance.inflight_balance)],
      ['Inflight credit', figure(balance.inflight_credit_balance)],
      ['Inflight debit', figure(balance.inflight_debit_balance)],
      ['Queued credit', figure(balance.queued_credit_balance)],
      ['Queued debit', figure(balance.queued_debit_balance)],
    ], 'Figures'),
    facts([
      ['Currency', balance.currency],
      ['Precision', precision === undefined ? 'not known (no transactions readable in this currency): amounts in the smallest unit' : precision],
      ['Ledger', recordLink(balance.ledger_id)],
      ['Indicator', balance.indicator || '—'],
      ['Identity', balance.identity_id || '—'],
      ['Version', String(balance.version)],
      ['Created', time(balance.created_at)],
      ['Fund lineage', balance.track_fund_lineage ? `tracked (${balance.allocation_strategy})` : 'not tracked'],
    ], 'Details'),
    el('details', null, el('summary', null, 'Metadata'), el('pre', { class: 'json' }, JSON.stringify(balance.meta_data ?? {}, null, 2))));
}

async function loadHistory(ctx: PageContext, balance: Balance, precision: string | undefined): Promise<Child[]> {
  const changes: BalanceChange[] = [];
  let cursor: string | null = null;
  do {
    const page: BalanceHistory = await api<BalanceHistory>('GET', `/balances/${encodeURIComponent(balance.balance_id)}/history`, {
      query: { limit: HISTORY_PAGE, cursor: cursor ?? undefined }, signal: ctx.signal,
    });
    changes.push(...page.changes);
    cursor = page.next_cursor;
  } while (cursor !== null && changes.length < HISTORY_CHANGES_MAX);
  if (changes.length === 0) return [el('p', { class: 'empty' }, 'This balance has not moved yet.')];
  const chart = historyChart(changes, precision, balance.currency);
  ctx.onLeave(chart.dispose);
  const parts: Child[] = [chart.element];
  if (cursor !== null) parts.push(el('p', { class: 'note' }, `The first ${changes.length} changes are drawn; the balance as of a later moment is below.`));
  return parts;
}

function asOfForm(body: HTMLElement, balance: Balance, precision: string | undefined, signal: AbortSignal): void {
  const moment = input('timestamp', '', { type: 'datetime-local', step: '1', required: '' });
  const result = el('div', { class: 'as-of-result', attrs: { 'aria-live': 'polite' } });
  const form = el('form', { class: 'inline', attrs: { 'aria-label': 'Balance as of a moment' } },
    field('Moment (your time zone)', moment), el('button', { attrs: { type: 'submit' } }, 'Show'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const when = new Date(moment.value);
    if (Number.isNaN(when.getTime())) return;
    const timestamp = when.toISOString();
    replace(result, el('p', { class: 'loading' }, 'Loading…'));
    void fill(result, async () => {
      const answer = await api<{ balance: Balance; timestamp: string }>('GET', `/balances/${encodeURIComponent(balance.balance_id)}/at`, { query: { timestamp }, signal });
      const figure = (value: unknown): Child => amount(value, precision, balance.currency);
      return facts([
        ['As of', time(answer.timestamp)],
        ['Balance', figure(answer.balance.balance)],
        ['Available', figure(answer.balance.available_balance)],
        ['Credit', figure(answer.balance.credit_balance)],
        ['Debit', figure(answer.balance.debit_balance)],
        ['Inflight', figure(answer.balance.inflight_balance)],
      ], 'Balance as of the moment');
    });
  });
  settle(body, form, result);
}

async function loadLineage(ctx: PageContext, balance: Balance, precision: string | undefined): Promise<Child[]> {
  if (!balance.track_fund_lineage) return [el('p', { class: 'empty' }, 'This balance does not track fund lineage (track_fund_lineage is false).')];
  const answer = await api<BalanceLineage>('GET', `/balances/${encodeURIComponent(balance.balance_id)}/lineage`, { signal: ctx.signal });
  if (answer.providers.length === 0) return [el('p', { class: 'empty' }, 'No tagged funds have reached this balance yet.')];
  const figure = (value: unknown): Child => amount(value, precision, balance.currency);
  const parts: Child[] = [];
  const chart = pieChart(`Available funds of ${balance.balance_id} by provider`,
    answer.providers.map((provider) => ({ name: provider.provider, digits: amountDigits(provider.available) })).filter((slice) => !slice.digits.startsWith('-') && slice.digits !== '0'),
    precision);
  ctx.onLeave(chart.dispose);
  parts.push(el('div', { class: 'side-by-side' }, chart.element, table('Funds by provider', [
    { header: 'Provider', cell: (provider) => provider.provider },
    { header: 'Received', cell: (provider) => figure(provider.amount), numeric: true },
    { header: 'Spent', cell: (provider) => figure(provider.spent), numeric: true },
    { header: 'Available', cell: (provider) => figure(provider.available), numeric: true },
    { header: 'Arriving (held)', cell: (provider) => figure(provider.inflight_amount), numeric: true },
    { header: 'Leaving (held)', cell: (provider) => figure(provider.inflight_spent), numeric: true },
  ], answer.providers)));
  append(parts[0] as HTMLElement, el('p', null, 'Total with lineage: ', figure(answer.total_with_lineage)));
  return parts;
}
