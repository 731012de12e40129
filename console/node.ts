// The node: its health, version and role (GET /health, public), the log's seq and the query index's lag
// (GET /search/reindex), in a replicated group every node's role, term, applied seq and lag as PostgreSQL
// holds them (GET /admin/replication?group=true: what `folio replication status` shows), and the
// snapshots on disk (GET /admin/snapshots). Kept live by the change feed (GET /events, read as a stream):
// each committed change moves the log's seq at once, and the rest is read again at most once a second.
// Without the feed (refused for this key, or ended) the page says so and reads again every few seconds.

import { api, ApiFailure, readEventStream } from './api.js';
import { el, facts, failureBox, fill, replace, section, table, time, type Child } from './dom.js';
import { bytes, duration } from './format.js';
import type { PageContext } from './page.js';
import type { Health, Inspection, ReindexStatus, Snapshot } from './records.js';

/** Reads of the node's state at most this often while changes stream in. */
const REFRESH_MS_MIN = 1_000;
/** Without the change feed, how often the node is read again. */
const POLL_MS = 5_000;
/** How long before a change feed that ended is opened again. */
const RECONNECT_MS = 2_000;

export function nodePage(ctx: PageContext): void {
  ctx.heading('Node');
  const live = el('p', { class: 'live', attrs: { role: 'status' } }, 'Connecting to the change feed…');
  const seqFigure = el('strong', { class: 'seq', attrs: { 'data-seq': '' } }, '—');
  const logLine = el('p', { class: 'log-seq' }, 'Log seq (last committed change): ', seqFigure, ' ', el('span', { class: 'note', attrs: { 'aria-live': 'off' } }));
  const health = section('Health');
  const index = section('Query index');
  const group = section('Replication group');
  const snapshots = section('Snapshots');
  ctx.main.append(live, logLine, health.element, index.element, group.element, snapshots.element);

  let lastRead = 0;
  let pending: number | undefined;
  let knownSeq = 0;
  const setSeq = (seq: number): void => {
    if (seq <= knownSeq) return;
    knownSeq = seq;
    seqFigure.textContent = String(seq);
    seqFigure.setAttribute('data-seq', String(seq));
  };
  const readAll = async (): Promise<void> => {
    lastRead = Date.now();
    await Promise.all([
      fill(health.body, async () => {
        const answer = await api<Health>('GET', '/health', { signal: ctx.signal });
        setSeq(answer.applied_seq);
        return healthOf(answer);
      }),
      fill(index.body, async () => indexOf(await api<ReindexStatus>('GET', '/search/reindex', { signal: ctx.signal }))),
      fill(group.body, async () => groupOf(await api<Inspection>('GET', '/admin/replication', { query: { group: 'true' }, signal: ctx.signal }))),
      fill(snapshots.body, async () => snapshotsOf(await api<Snapshot[]>('GET', '/admin/snapshots', { signal: ctx.signal }))),
    ]);
  };
  /** Reads everything again, at most once per REFRESH_MS_MIN. */
  const refreshSoon = (): void => {
    if (pending !== undefined || ctx.signal.aborted) return;
    const wait = Math.max(0, lastRead + REFRESH_MS_MIN - Date.now());
    pending = window.setTimeout(() => {
      pending = undefined;
      void readAll();
    }, wait);
  };
  ctx.onLeave(() => clearTimeout(pending));

  void (async () => {
    await readAll();
    let poll: number | undefined;
    ctx.onLeave(() => clearInterval(poll));
    while (!ctx.signal.aborted) {
      try {
        live.textContent = 'Live: following the change feed.';
        live.className = 'live on';
        await readEventStream('/events', { after: knownSeq }, (event) => {
          const seq = Number(event.id);
          if (Number.isSafeInteger(seq)) setSeq(seq);
          refreshSoon();
        }, ctx.signal);
        if (ctx.signal.aborted) return;
        live.textContent = 'The change feed ended; opening it again…';
        live.className = 'live off';
      } catch (error) {
        if (ctx.signal.aborted) return;
        if (error instanceof ApiFailure && error.failure.status >= 400 && error.failure.status < 500) {
          // Refused for this key: said plainly; the page is read again every few seconds instead.
          replace(live, el('span', null, `Not live: the change feed was refused; reading again every ${POLL_MS / 1000} s.`), failureBox(error, 'GET /events'));
          live.className = 'live off';
          poll = window.setInterval(() => void readAll(), POLL_MS);
          return;
        }
        live.textContent = `The change feed was cut off (${(error as Error).message}); opening it again…`;
        live.className = 'live off';
      }
      await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
      refreshSoon();
    }
  })();
}

function healthOf(health: Health): HTMLElement {
  const pairs: Array<[string, Child]> = [
    ['Status', el('span', { class: `status status-${health.status.toLowerCase()}` }, health.status)],
    ['Version', health.version],
    ['Role', el('span', { attrs: { 'data-role': health.role } }, health.role)],
    ['Term', String(health.term)],
    ['Applied seq', el('span', { attrs: { 'data-applied-seq': String(health.applied_seq) } }, String(health.applied_seq))],
  ];
  if (health.leader) pairs.push(['Leader', `${health.leader.name} (${health.leader.url})`]);
  if (health.lag_ms !== undefined) pairs.push(['Lag behind the group\'s log', duration(health.lag_ms)]);
  return facts(pairs, 'Health');
}

function indexOf(status: ReindexStatus): HTMLElement {
  return facts([
    ['Indexed up to seq', String(status.index_checkpoint_seq)],
    ['Lag', el('span', { attrs: { 'data-index-lag': String(status.index_lag_events) } }, `${status.index_lag_events} events, ${duration(status.index_lag_seconds * 1000)}`)],
    ['Last rebuild', `${status.status}${status.phase ? ` (${status.phase})` : ''}`],
    ['Rebuild finished', time(status.finished_at ?? '')],
  ], 'Query index');
}

function groupOf(inspection: Inspection): Child[] {
  const own: Array<[string, Child]> = [
    ['This node', inspection.node ?? '(single node)'],
    ['Phase', inspection.phase ?? inspection.role],
    ['Role', inspection.role],
    ['Term', String(inspection.term)],
    ['Applied seq', String(inspection.applied_seq)],
  ];
  if (inspection.lease) {
    own.push(['Lease', `term ${inspection.lease.term}, held by ${inspection.lease.holder || 'nobody'}${inspection.lease.url ? ` (${inspection.lease.url})` : ''}, ${duration(inspection.lease.expires_in_ms)} left`]);
  }
  if (inspection.lag_percentiles_ms) {
    const lag = inspection.lag_percentiles_ms;
    own.push(['Apply lag', `p50 ${duration(lag.p50)}, p99 ${duration(lag.p99)}, max ${duration(lag.max)} over ${lag.samples} records`]);
  }
  const parts: Child[] = [facts(own, 'This node in its group')];
  if (inspection.group_error) parts.push(el('p', { class: 'failure', attrs: { role: 'alert' } }, inspection.group_error));
  const groupView = inspection.group;
  if (!groupView) {
    if (inspection.role === 'single') parts.push(el('p', { class: 'note' }, 'Replication is off: this is a single node.'));
    return parts;
  }
  parts.push(el('p', null, `Group: term ${groupView.lease.term}, lease ${groupView.lease.holder ? `held by ${groupView.lease.holder}` : 'free (no leader)'}, log ends at seq ${groupView.log_end_seq}.`));
  parts.push(table('Nodes of the group', [
    { header: 'Node', cell: (node) => el('span', { attrs: { 'data-node': node.name } }, node.name) },
    { header: 'Role', cell: (node) => (node.silent ? `${node.role} (silent)` : node.role) },
    { header: 'Term', cell: (node) => String(node.term), numeric: true },
    { header: 'Applied seq', cell: (node) => String(node.applied_seq), numeric: true },
    { header: 'Behind (events)', cell: (node) => String(node.behind_events), numeric: true },
    { header: 'Lag', cell: (node) => (node.lag_ms === null ? '—' : duration(node.lag_ms)), numeric: true },
    { header: 'Reported', cell: (node) => `${duration(node.reported_ms_ago)} ago` },
    { header: 'Address', cell: (node) => node.url },
  ], groupView.nodes));
  return parts;
}

function snapshotsOf(list: Snapshot[]): HTMLElement {
  return table('Snapshots on disk', [
    { header: 'Seq', cell: (snapshot) => String(snapshot.seq), numeric: true },
    { header: 'File', cell: (snapshot) => el('code', null, snapshot.file) },
    { header: 'Size', cell: (snapshot) => bytes(snapshot.size_bytes), numeric: true },
    { header: 'State hash', cell: (snapshot) => el('code', { class: 'hash' }, snapshot.state_hash) },
    { header: 'Written', cell: (snapshot) => time(new Date(snapshot.created_at).toISOString()) },
  ], list, 'none yet.');
}
