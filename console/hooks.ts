// Hooks (master key only, as the API has it): every hook (GET /hooks) with its recent deliveries, their
// status and retries (GET /hooks/:id/deliveries: what the delivering node followed since it started),
// read again every few seconds while the page is open.

import { api } from './api.js';
import { el, facts, failureBox, fill, recordLink, replace, section, table, time, type Child } from './dom.js';
import type { PageContext } from './page.js';
import type { Hook, HookDelivery } from './records.js';

const DELIVERIES_SHOWN = 20;
const REFRESH_MS = 5_000;

export function hooksPage(ctx: PageContext): void {
  ctx.heading('Hooks');
  const list = section('Hooks and their recent deliveries');
  ctx.main.append(list.element);
  let timer: number | undefined;
  ctx.onLeave(() => clearTimeout(timer));
  const read = async (): Promise<void> => {
    await fill(list.body, async () => {
      const hooks = await api<Hook[]>('GET', '/hooks', { signal: ctx.signal });
      if (hooks.length === 0) return el('p', { class: 'empty' }, 'No hook is registered.');
      return Promise.all(hooks.map((hook) => hookPart(ctx, hook)));
    });
    if (!ctx.signal.aborted) timer = window.setTimeout(() => void read(), REFRESH_MS);
  };
  void read();
}

async function hookPart(ctx: PageContext, hook: Hook): Promise<Child> {
  const body = el('div');
  const part = el('article', { class: 'hook', attrs: { 'aria-label': `Hook ${hook.name}` } },
    el('h3', null, hook.name, ' ', el('code', null, hook.hook_id)),
    facts([
      ['URL', el('code', null, hook.url)],
      ['Type', hook.type],
      ['Active', hook.active ? 'yes' : 'no'],
      ['Timeout', `${hook.timeout} s per attempt`],
      ['Retries', `at most ${hook.retry_count}`],
    ], `Hook ${hook.name}`),
    body);
  try {
    const answer = await api<{ since: string; deliveries: HookDelivery[] }>('GET', `/hooks/${encodeURIComponent(hook.hook_id)}/deliveries`, { query: { limit: DELIVERIES_SHOWN }, signal: ctx.signal });
    replace(body,
      el('p', { class: 'note' }, 'Deliveries followed since ', time(answer.since), ' by this node.'),
      table(`Recent deliveries of ${hook.name}`, [
        { header: 'Status', cell: (delivery) => el('span', { class: `status status-${delivery.status}`, attrs: { 'data-status': delivery.status } }, delivery.status) },
        { header: 'Event', cell: (delivery) => delivery.event },
        { header: 'Transaction', cell: (delivery) => recordLink(delivery.transaction_id) },
        { header: 'Attempts', cell: (delivery) => String(delivery.attempts), numeric: true },
        { header: 'Retries', cell: (delivery) => String(delivery.retries), numeric: true },
        { header: 'Last attempt', cell: (delivery) => time(delivery.last_attempt_at) },
        { header: 'Next attempt', cell: (delivery) => time(delivery.next_attempt_at) },
        { header: 'Last failure', cell: (delivery) => delivery.last_failure || '—' },
        { header: 'Event id', cell: (delivery) => el('code', null, delivery.event_id) },
      ], answer.deliveries, 'none since then.'));
  } catch (error) {
    replace(body, failureBox(error, 'Reading its deliveries'));
  }
  return part;
}
