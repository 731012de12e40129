// Reconciliation: uploaded statements (GET /reconciliation/uploads), runs (POST /search/reconciliations,
// newest first), matching rules (GET /reconciliation/matching-rules); with a key that may write
// reconciliation, uploading a statement (POST /reconciliation/upload) and starting a run on one
// (POST /reconciliation/start). A run's page shows its progress, refreshed until it ends, and its matched
// and unmatched records side by side (GET /reconciliation/:id/matches and /unmatched, each paged).

import { api } from './api.js';
import { amount, el, facts, failureBox, field, fill, input, pager, recordLink, section, select, settle, table, time, writeDialog, type Child } from './dom.js';
import { amountDigits } from './format.js';
import { go, queryNumber, routeWith, type PageContext } from './page.js';
import type { Match, MatchingRule, Reconciliation, ResultsPage, SearchAnswer, Unmatched, Upload } from './records.js';
import { can } from './session.js';

const ROWS = 20;
/** How often a run in progress is read again. */
const PROGRESS_EVERY_MS = 1_000;
const STRATEGIES = ['one_to_one', 'one_to_many', 'many_to_one'];

export function reconciliationPage(ctx: PageContext): void {
  const writes = can('reconciliation', 'write');
  ctx.heading('Reconciliation',
    writes ? el('button', { class: 'primary', attrs: { type: 'button' }, on: { click: () => uploadDialog(ctx) } }, 'Upload a statement…') : null,
    writes ? el('button', { class: 'primary', attrs: { type: 'button' }, on: { click: () => void startDialog() } }, 'Start a reconciliation…') : null);
  const uploads = section('Uploads');
  const runs = section('Runs');
  const rules = section('Matching rules');
  ctx.main.append(uploads.element, runs.element, rules.element);
  const uploadOffset = queryNumber(ctx.query, 'uploads', 0);
  const runOffset = queryNumber(ctx.query, 'runs', 0);
  const here = (changes: Record<string, number>): string => routeWith('/reconciliation', { uploads: uploadOffset || undefined, runs: runOffset || undefined, ...changes });
  void fill(uploads.body, async () => {
    const list = await api<Upload[]>('GET', '/reconciliation/uploads', { query: { limit: ROWS, offset: uploadOffset }, signal: ctx.signal });
    return [
      table('Uploads', [
        { header: 'Upload', cell: (upload) => el('code', null, upload.upload_id) },
        { header: 'Source', cell: (upload) => upload.source },
        { header: 'Records', cell: (upload) => String(upload.record_count), numeric: true },
        { header: 'Uploaded', cell: (upload) => time(upload.created_at) },
      ], list, 'no statement uploaded yet.'),
      pager('Uploads', { offset: uploadOffset, limit: ROWS, shown: list.length }, (next) => go(here({ uploads: next }))),
    ];
  });
  void fill(runs.body, async () => {
    const answer = await api<SearchAnswer<Reconciliation>>('POST', '/search/reconciliations', {
      body: { q: '*', sort_by: 'created_at:desc', page: Math.floor(runOffset / ROWS) + 1, per_page: ROWS }, signal: ctx.signal,
    });
    const list = answer.hits.map((hit) => hit.document);
    return [
      table('Runs', [
        { header: 'Run', cell: (run) => recordLink(run.reconciliation_id) },
        { header: 'Status', cell: (run) => el('span', { class: `status status-${run.status}` }, run.status) },
        { header: 'Progress', cell: (run) => progress(run) },
        { header: 'Matched', cell: (run) => String(run.matched_transactions), numeric: true },
        { header: 'Unmatched', cell: (run) => String(run.unmatched_transactions), numeric: true },
        { header: 'Strategy', cell: (run) => run.strategy },
        { header: 'Upload', cell: (run) => el('code', null, run.upload_id) },
        { header: 'Started', cell: (run) => time(run.started_at) },
      ], list, 'no run yet.'),
      pager('Runs', { offset: runOffset, limit: ROWS, total: answer.found, shown: list.length }, (next) => go(here({ runs: next }))),
    ];
  });
  void fill(rules.body, async () => table('Matching rules', [
    { header: 'Rule', cell: (rule) => el('code', null, rule.rule_id) },
    { header: 'Name', cell: (rule) => rule.name },
    { header: 'Criteria (all must hold)', cell: (rule) => el('ul', { class: 'plain' }, ...rule.criteria.map((criterion) => el('li', null,
      `${criterion.field} ${criterion.operator}${criterion.allowable_drift !== undefined ? ` (drift ${String(criterion.allowable_drift)})` : ''}`))) },
    { header: 'Description', cell: (rule) => rule.description || '—' },
  ], await api<MatchingRule[]>('GET', '/reconciliation/matching-rules', { signal: ctx.signal }), 'no matching rule yet.'));

  async function startDialog(): Promise<void> {
    const [uploadList, ruleList] = await Promise.all([
      api<Upload[]>('GET', '/reconciliation/uploads', { query: { limit: 100 } }).catch(() => [] as Upload[]),
      api<MatchingRule[]>('GET', '/reconciliation/matching-rules').catch(() => [] as MatchingRule[]),
    ]);
    const upload = select('upload_id', uploadList.map((item) => [item.upload_id, `${item.source}: ${item.record_count} records (${item.upload_id})`]));
    const strategy = select('strategy', STRATEGIES.map((name) => [name, name]), 'one_to_one');
    const grouping = input('grouping_criteria', '', { autocomplete: 'off', placeholder: 'e.g. reference (one_to_many, many_to_one)' });
    const dryRun = input('dry_run', '', { type: 'checkbox' });
    const ruleBoxes = ruleList.map((rule) => {
      const box = input('rule', rule.rule_id, { type: 'checkbox', value: rule.rule_id });
      return { box, element: el('label', { class: 'check' }, box, ` ${rule.name} `, el('code', null, rule.rule_id)) };
    });
    let started = '';
    writeDialog({
      title: 'Start a reconciliation',
      body: [
        el('p', null, 'POST /reconciliation/start: matches the upload\'s records against the ledger in the background.'),
        field('Upload', upload), field('Strategy', strategy), field('Grouping field (optional)', grouping),
        el('fieldset', null, el('legend', null, 'Matching rules (any may match)'), ...(ruleBoxes.length > 0 ? ruleBoxes.map((item) => item.element) : [el('p', null, 'No rule to choose.')])),
        el('label', { class: 'check' }, dryRun, ' Dry run (results are not recorded)'),
      ],
      confirm: 'Start',
      run: async () => {
        const body: Record<string, unknown> = {
          upload_id: upload.value, strategy: strategy.value, dry_run: dryRun.checked,
          matching_rule_ids: ruleBoxes.filter((item) => item.box.checked).map((item) => item.box.value),
        };
        if (grouping.value.trim() !== '') body.grouping_criteria = grouping.value.trim();
        const run = await api<{ reconciliation_id: string }>('POST', '/reconciliation/start', { body });
        started = run.reconciliation_id;
        return el('p', null, 'Started ', recordLink(run.reconciliation_id), '.');
      },
      done: () => go(`/reconciliation/${encodeURIComponent(started)}`),
    });
  }
}

function uploadDialog(ctx: PageContext): void {
  const file = input('file', '', { type: 'file', accept: '.csv,.json,text/csv,application/json', required: '' });
  const source = input('source', '', { required: '', autocomplete: 'off', placeholder: 'e.g. bank-statement' });
  writeDialog({
    title: 'Upload a statement',
    body: [
      el('p', null, 'POST /reconciliation/upload: a CSV or JSON file of external records (id, amount, currency, reference, description, date).'),
      field('File', file), field('Source', source),
    ],
    confirm: 'Upload',
    run: async () => {
      const chosen = file.files?.[0];
      if (!chosen) throw new Error('choose a file');
      const form = new FormData();
      form.append('source', source.value.trim());
      form.append('file', chosen, chosen.name);
      const upload = await api<Upload>('POST', '/reconciliation/upload', { form });
      return el('p', null, `Uploaded ${upload.record_count} records as `, el('code', null, upload.upload_id), '.');
    },
    done: () => ctx.reload(),
  });
}

function progress(run: Reconciliation): Child {
  const total = Math.max(run.total_count, 0);
  const done = Math.min(run.processed_count, total);
  return el('span', { class: 'progress' },
    el('progress', { attrs: { max: String(Math.max(total, 1)), value: String(total === 0 ? (run.status === 'completed' ? 1 : 0) : done), 'aria-label': `${done} of ${total} records processed` } }),
    ` ${done}/${total}`);
}

export function reconciliationRunPage(ctx: PageContext): void {
  const runId = ctx.params[0] ?? '';
  ctx.heading('Reconciliation run', ' ', el('code', null, runId));
  const status = section('Status');
  const results = el('div', { class: 'side-by-side results-pair' });
  const matched = section('Matched', 3);
  const unmatched = section('Unmatched', 3);
  results.append(matched.element, unmatched.element);
  ctx.main.append(status.element, el('section', { attrs: { 'aria-label': 'Results' } }, el('h2', null, 'Results'), results));
  const matchOffset = queryNumber(ctx.query, 'matched', 0);
  const unmatchedOffset = queryNumber(ctx.query, 'unmatched', 0);
  const here = (changes: Record<string, number>): string => routeWith(`/reconciliation/${encodeURIComponent(runId)}`, { matched: matchOffset || undefined, unmatched: unmatchedOffset || undefined, ...changes });
  let timer: number | undefined;
  ctx.onLeave(() => clearTimeout(timer));
  const showResults = (): void => {
    void fill(matched.body, async () => {
      const page = await api<ResultsPage<Match>>('GET', `/reconciliation/${encodeURIComponent(runId)}/matches`, { query: { limit: ROWS, offset: matchOffset }, signal: ctx.signal });
      return [
        table('Matched records', [
          { header: 'External record', cell: (match) => el('code', null, match.external_transaction_id) },
          { header: 'Ledger transactions', cell: (match) => el('span', null, ...match.internal_transaction_ids.flatMap((id, index) => (index === 0 ? [recordLink(id)] : [', ', recordLink(id)]))) },
          { header: 'Rule', cell: (match) => el('code', null, match.rule_id) },
          { header: 'Amount difference', cell: (match) => amount(match.precise_amount_difference, amountDigits(match.difference_precision)), numeric: true },
          { header: 'Time difference', cell: (match) => `${match.time_difference_seconds} s`, numeric: true },
        ], page.data, 'none.'),
        pager('Matched', { offset: matchOffset, limit: ROWS, total: page.total_count, shown: page.data.length }, (next) => go(here({ matched: next }))),
      ];
    });
    void fill(unmatched.body, async () => {
      const page = await api<ResultsPage<Unmatched>>('GET', `/reconciliation/${encodeURIComponent(runId)}/unmatched`, { query: { limit: ROWS, offset: unmatchedOffset }, signal: ctx.signal });
      return [
        table('Unmatched records', [
          { header: 'External record', cell: (entry) => el('code', null, entry.external_transaction_id) },
          { header: 'Amount', cell: (entry) => amount(entry.record.precise_amount, amountDigits(entry.record.precision), entry.record.currency), numeric: true },
          { header: 'Reference', cell: (entry) => entry.record.reference },
          { header: 'Date', cell: (entry) => time(entry.record.date) },
          { header: 'Why', cell: (entry) => entry.reason },
        ], page.data, 'none.'),
        pager('Unmatched', { offset: unmatchedOffset, limit: ROWS, total: page.total_count, shown: page.data.length }, (next) => go(here({ unmatched: next }))),
      ];
    });
  };
  const read = async (first: boolean): Promise<void> => {
    let run: Reconciliation;
    try {
      run = await api<Reconciliation>('GET', `/reconciliation/${encodeURIComponent(runId)}`, { signal: ctx.signal });
    } catch (error) {
      if (ctx.signal.aborted) return;
      settle(status.body, failureBox(error, 'Reading the run'));
      if (first) showResults();
      return;
    }
    settle(status.body, statusOf(run));
    const running = run.status === 'started' || run.status === 'in_progress';
    if (first || !running) showResults();
    if (running && !ctx.signal.aborted) timer = window.setTimeout(() => void read(false), PROGRESS_EVERY_MS);
  };
  void read(true);
}

function statusOf(run: Reconciliation): HTMLElement {
  const pairs: Array<[string, Child]> = [
    ['Status', el('span', { class: `status status-${run.status}`, attrs: { 'data-status': run.status } }, run.status)],
    ['Progress', progress(run)],
    ['Matched', String(run.matched_transactions)],
    ['Unmatched', String(run.unmatched_transactions)],
    ['Strategy', run.strategy],
    ['Grouping field', run.grouping_criteria || '—'],
    ['Rules', run.matching_rule_ids.join(', ')],
    ['Upload', el('code', null, run.upload_id)],
    ['Source', run.source],
    ['Dry run', run.is_dry_run ? 'yes (nothing recorded)' : 'no'],
    ['Started', time(run.started_at)],
    ['Completed', time(run.completed_at)],
  ];
  if (run.failure_reason) pairs.push(['Failure', run.failure_reason]);
  return el('div', { attrs: { role: 'status', 'aria-live': 'polite' } }, facts(pairs, 'Run status'));
}
