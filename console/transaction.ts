// One transaction (GET /transactions/:id): its figures and status, the legs or shares of a split, its
// life (the hold it belongs to, its commits, void and refund: the transactions whose parent it is,
// POST /transactions/filter on parent_transaction), its metadata, its row hash (checked here, in the
// browser, against the fields it covers), its position in the log's checksum chain (GET
// /transactions/:id/log-position), and its fund lineage (GET /transactions/:id/lineage). With a
// key that may write transactions, the page offers what the API allows on it: commit or void a hold
// (PUT /transactions/inflight/:id) and refund (POST /refund-transaction/:id), each confirmed first and
// answered with the API's own answer or refusal.

import { api } from './api.js';
import { amount, el, facts, failureBox, field, fill, input, recordLink, replace, section, settle, table, time, writeDialog, type Child } from './dom.js';
import { amountDigits, formatAmount, parseAmount } from './format.js';
import { transactionColumns } from './lists.js';
import type { PageContext } from './page.js';
import { learnPrecisions } from './precision.js';
import type { ChainRecordPosition, FilterAnswer, Transaction, TransactionLineage, TransactionLogPosition } from './records.js';
import { can } from './session.js';

/** Transactions of a transaction's life read at once (commits of one hold are few; a split's legs at most this). */
const CHILDREN_MAX = 100;

export function transactionPage(ctx: PageContext): void {
  const transactionId = ctx.params[0] ?? '';
  ctx.heading('Transaction', ' ', el('code', null, transactionId));
  const summary = section('Summary');
  const actions = el('div', { class: 'actions', attrs: { role: 'group', 'aria-label': 'Actions' } });
  const life = section('Life');
  const shares = section('Legs and shares');
  const metadata = section('Metadata');
  const chain = section('Hash');
  const position = section('Position in the log');
  const lineage = section('Fund lineage');
  ctx.main.append(actions, summary.element, life.element, shares.element, metadata.element, chain.element, position.element, lineage.element);
  void (async () => {
    let transaction: Transaction;
    try {
      transaction = await api<Transaction>('GET', `/transactions/${encodeURIComponent(transactionId)}`, { signal: ctx.signal });
    } catch (error) {
      if (ctx.signal.aborted) return;
      for (const part of [summary, life, shares, metadata, chain, position, lineage]) settle(part.body, failureBox(error, 'Reading the transaction'));
      return;
    }
    learnPrecisions([transaction]);
    const precision = amountDigits(transaction.precision);
    settle(summary.body, summaryOf(transaction, precision));
    replace(actions, ...actionsFor(ctx, transaction, precision));
    void fill(life.body, () => lifeOf(ctx, transaction));
    void fill(shares.body, () => sharesOf(ctx, transaction, precision));
    settle(metadata.body, el('pre', { class: 'json' }, JSON.stringify(transaction.meta_data ?? {}, null, 2)));
    void fill(chain.body, () => hashOf(transaction));
    void fill(position.body, () => logPositionOf(ctx, transactionId));
    void fill(lineage.body, async () => {
      const answer = await api<TransactionLineage>('GET', `/transactions/${encodeURIComponent(transactionId)}/lineage`, { signal: ctx.signal });
      if (!answer.fund_allocation) return el('p', { class: 'empty' }, 'No fund allocation: this transaction did not draw on tagged funds.');
      return table('Funds drawn on, by provider', [
        { header: 'Provider', cell: (share) => share.provider },
        { header: 'Amount', cell: (share) => amount(share.amount, precision, transaction.currency), numeric: true },
      ], answer.fund_allocation);
    });
  })();
}

function summaryOf(transaction: Transaction, precision: string): HTMLElement {
  const pairs: Array<[string, Child]> = [
    ['Status', el('span', { class: `status status-${transaction.status.toLowerCase()}` }, transaction.status)],
    ['Amount', amount(transaction.precise_amount, precision, transaction.currency)],
    ['Precision', precision],
    ['Source', recordLink(transaction.source)],
    ['Destination', recordLink(transaction.destination)],
    ['Reference', transaction.reference],
    ['Description', transaction.description || '—'],
    ['Parent', recordLink(transaction.parent_transaction)],
    ['Created', time(transaction.created_at)],
    ['Effective', time(transaction.effective_date)],
    ['Scheduled for', time(transaction.scheduled_for)],
    ['Hold', transaction.inflight ? 'yes' : 'no'],
  ];
  if (transaction.inflight) {
    pairs.push(['Hold expires', time(transaction.inflight_expiry_date)], ['Commits by itself at', time(transaction.inflight_commit_date)]);
    const committed = amountDigits(transaction.precise_committed_amount ?? 0);
    pairs.push(['Committed so far', amount(committed, precision, transaction.currency)]);
    if (transaction.status === 'INFLIGHT') {
      const remaining = BigInt(amountDigits(transaction.precise_amount)) - BigInt(committed);
      pairs.push(['Still held', amount(remaining.toString(), precision, transaction.currency)]);
    }
  }
  pairs.push(['Overdraft allowed', transaction.allow_overdraft ? 'yes' : 'no']);
  if (transaction.batch_id) pairs.push(['Batch', el('code', null, transaction.batch_id)]);
  if (transaction.rejection) pairs.push(['Rejected', `${transaction.rejection.code}: ${transaction.rejection.message}`]);
  return facts(pairs, 'Summary');
}

/** What a child transaction is to its parent. */
function roleOf(parent: Transaction, child: Transaction): string {
  if (child.reference === `${parent.transaction_id}_refund`) return 'refund';
  if (parent.legs?.includes(child.transaction_id)) return 'leg';
  if (parent.inflight && child.status === 'VOID') return 'void';
  if (parent.inflight && child.status === 'APPLIED') {
    return BigInt(amountDigits(child.precise_amount)) < BigInt(amountDigits(parent.precise_amount)) ? 'partial commit' : 'commit';
  }
  return child.status.toLowerCase();
}

async function lifeOf(ctx: PageContext, transaction: Transaction): Promise<Child[]> {
  const answer = await api<FilterAnswer<Transaction>>('POST', '/transactions/filter', {
    body: { filters: [{ field: 'parent_transaction', operator: 'eq', value: transaction.transaction_id }], sort_by: 'created_at', sort_order: 'asc', limit: CHILDREN_MAX, include_count: true },
    signal: ctx.signal,
  });
  const parts: Child[] = [];
  if (transaction.parent_transaction !== '') parts.push(el('p', null, 'Made by an action on ', recordLink(transaction.parent_transaction), '.'));
  const columns = transactionColumns();
  columns.splice(1, 0, { header: 'What', cell: (child) => roleOf(transaction, child) });
  parts.push(table('Transactions made from this one', columns, answer.data, 'none (no commit, void, refund or leg).'));
  if ((answer.total_count ?? 0) > answer.data.length) parts.push(el('p', { class: 'note' }, `The first ${answer.data.length} of ${answer.total_count} are shown.`));
  return parts;
}

async function sharesOf(ctx: PageContext, transaction: Transaction, precision: string): Promise<Child[]> {
  const parts: Child[] = [];
  const shareTable = (caption: string, list: NonNullable<Transaction['sources']>): Child => table(caption, [
    { header: 'Balance', cell: (share) => recordLink(share.identifier) },
    { header: 'Distribution', cell: (share) => share.distribution },
    { header: 'Amount', cell: (share) => amount(share.precise_amount, precision, transaction.currency), numeric: true },
  ], list);
  if (transaction.sources) parts.push(shareTable('Sources', transaction.sources));
  if (transaction.destinations) parts.push(shareTable('Destinations', transaction.destinations));
  if (transaction.legs && transaction.legs.length > 0) {
    const legs = await Promise.all(transaction.legs.slice(0, CHILDREN_MAX).map((legId) => api<Transaction>('GET', `/transactions/${encodeURIComponent(legId)}`, { signal: ctx.signal })));
    parts.push(table('Legs', transactionColumns(), legs));
  }
  if (parts.length === 0) parts.push(el('p', { class: 'empty' }, 'One source and one destination: no split.'));
  return parts;
}

/** The row hash, and whether it matches the fields it covers (computed here with the browser's SHA-256). */
async function hashOf(transaction: Transaction): Promise<Child[]> {
  const covered = JSON.stringify([amountDigits(transaction.precise_amount), transaction.reference, transaction.currency, transaction.source, transaction.destination]);
  const parts: Child[] = [
    facts([['Row hash (SHA-256)', el('code', { class: 'hash' }, transaction.hash)], ['Covers', el('code', null, covered)]], 'Hash'),
  ];
  if (!crypto.subtle) {
    parts.push(el('p', { class: 'note' }, 'This page is not served over https, so the browser cannot compute SHA-256 here to check the hash.'));
    return parts;
  }
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(covered));
  const hex = [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
  const matches = hex === transaction.hash;
  parts.push(el('p', { class: matches ? 'verified' : 'failure', attrs: { role: 'status', 'data-hash-check': matches ? 'match' : 'mismatch' } },
    matches ? '✓ The hash matches the amount, reference, currency, source and destination shown.' : `✗ The hash does not match: computed ${hex}.`));
  return parts;
}

/**
 * Where the transaction entered the log's checksum chain, and the later record holding its newest whole
 * version if there is one: each record's SHA-256 and the previous record's, which `folio verify` checks.
 */
async function logPositionOf(ctx: PageContext, transactionId: string): Promise<Child[]> {
  const answer = await api<TransactionLogPosition>('GET', `/transactions/${encodeURIComponent(transactionId)}/log-position`, { signal: ctx.signal });
  const shown = (which: string, at: ChainRecordPosition, label: string): HTMLElement => {
    const value = (field: keyof ChainRecordPosition, text: string, className?: string): HTMLElement =>
      el('code', { class: className, attrs: { 'data-field': field, 'data-value': String(at[field]) } }, text);
    const list = facts([
      ['Event seq', value('seq', String(at.seq))],
      ['Log record', el('span', null, 'seq ', value('record_first_seq', String(at.record_first_seq)), ' to ', value('record_last_seq', String(at.record_last_seq)))],
      ['Record checksum (SHA-256)', value('record_checksum', at.record_checksum, 'hash')],
      ['Previous record\'s checksum', value('prev_checksum', at.prev_checksum, 'hash')],
    ], label);
    list.setAttribute('data-log-position', which);
    return list;
  };
  const parts: Child[] = [el('h3', null, 'Created in'), shown('created', answer, 'Created in')];
  if (answer.last_changed) parts.push(el('h3', null, 'Last changed in'), shown('last_changed', answer.last_changed, 'Last changed in'));
  else parts.push(el('p', { class: 'note', attrs: { 'data-log-position': 'unchanged' } }, 'Not changed since (metadata changes are not counted).'));
  parts.push(el('p', { class: 'note' }, 'Each record carries the SHA-256 of the one before it; `folio verify` checks the whole chain on the server.'));
  return parts;
}

function actionsFor(ctx: PageContext, transaction: Transaction, precision: string): Child[] {
  if (!can('transactions', 'write')) return [];
  const buttons: Child[] = [];
  const button = (label: string, open: () => void): HTMLButtonElement => el('button', { class: 'primary', attrs: { type: 'button' }, on: { click: open } }, label);
  if (transaction.status === 'INFLIGHT') {
    buttons.push(button('Commit…', () => commitDialog(ctx, transaction, precision)), button('Void…', () => voidDialog(ctx, transaction)));
  }
  const refundable = transaction.parent_transaction === '' && ['APPLIED', 'INFLIGHT', 'VOID'].includes(transaction.status);
  if (refundable) buttons.push(button('Refund…', () => refundDialog(ctx, transaction)));
  return buttons;
}

function childShown(child: Transaction): Child {
  return el('p', null, 'Done: ', recordLink(child.transaction_id), ` is ${child.status}, `,
    amount(child.precise_amount, amountDigits(child.precision), child.currency), '.');
}

function commitDialog(ctx: PageContext, hold: Transaction, precision: string): void {
  const remaining = (BigInt(amountDigits(hold.precise_amount)) - BigInt(amountDigits(hold.precise_committed_amount ?? 0))).toString();
  const value = input('amount', '', { inputmode: 'decimal', autocomplete: 'off', placeholder: formatAmount(remaining, precision) });
  writeDialog({
    title: 'Commit the hold',
    body: [
      el('p', null, 'PUT /transactions/inflight/', el('code', null, hold.transaction_id), ': moves held money to the destination, now.'),
      el('p', null, 'Still held: ', amount(remaining, precision, hold.currency), '.'),
      field(`Amount to commit in ${hold.currency} (empty: all that is held)`, value, `Exact, at precision ${precision}; a part commits that much and keeps the rest held.`),
    ],
    confirm: 'Commit',
    run: async () => {
      const body: Record<string, unknown> = { status: 'commit', skip_queue: true };
      if (value.value.trim() !== '') {
        const parsed = parseAmount(value.value, precision);
        if ('error' in parsed) throw new Error(parsed.error);
        body.precise_amount = parsed.digits;
      }
      return childShown(await api<Transaction>('PUT', `/transactions/inflight/${encodeURIComponent(hold.transaction_id)}`, { body }));
    },
    done: () => ctx.reload(),
  });
}

function voidDialog(ctx: PageContext, hold: Transaction): void {
  writeDialog({
    title: 'Void the hold',
    body: [el('p', null, 'PUT /transactions/inflight/', el('code', null, hold.transaction_id), ': releases what is still held back to the source.')],
    confirm: 'Void',
    run: async () => childShown(await api<Transaction>('PUT', `/transactions/inflight/${encodeURIComponent(hold.transaction_id)}`, { body: { status: 'void', skip_queue: true } })),
    done: () => ctx.reload(),
  });
}

function refundDialog(ctx: PageContext, original: Transaction): void {
  const description = input('description', '', { autocomplete: 'off', placeholder: original.description });
  writeDialog({
    title: 'Refund the transaction',
    body: [
      el('p', null, 'POST /refund-transaction/', el('code', null, original.transaction_id), ': moves what it moved back to its source.'),
      field('Description (empty: the original\'s)', description),
    ],
    confirm: 'Refund',
    run: async () => {
      const body: Record<string, unknown> = { skip_queue: true };
      if (description.value.trim() !== '') body.description = description.value.trim();
      return childShown(await api<Transaction>('POST', `/refund-transaction/${encodeURIComponent(original.transaction_id)}`, { body }));
    },
    done: () => ctx.reload(),
  });
}
