// The nemesis's checker: once every fault is healed and the writes have stopped, it reads the group's
// log from PostgreSQL (the truth: every record, its term, its events decoded as the nodes decode them)
// and every node, and holds the run's history (nemesis/history.ts) against them. Each rule below is a
// claim docs/decisions-replication.md makes; a broken one is a violation, named with what broke it.
//
//   log        the group's log is contiguous, its chain of checksums unbroken, its terms never go down
//   feed       every node's change feed (GET /events as Server-Sent Events) holds every committed event
//              once, in order, each exactly as the group's log renders it (the same text)
//   state      every node has the same state hash at the log's end
//   balances   every node's balances equal two replays of what the log holds: the sum of its postings,
//              and a replay of its transactions (applied ones move money, open holds hold it); every
//              currency sums to zero
//   writes     every acknowledged write is in the log exactly once, with the id it was acknowledged with;
//              no write refused with a 4xx is there; a write whose answer was lost or a 503 is there at
//              most once; a bulk batch whole or not at all; a hold committed or voided once at most, and a
//              void of a hold whose commit was acknowledged refused; nothing is there that no client sent
//   terms      each term was taken once (a trigger on the lease row records every take: who took it); an
//              acknowledgement of a new write came from the node that held the term of the record that
//              holds the write; no two nodes said they led in one term, and only its holder did
//   paused     a leader stopped for longer than its lease acknowledged no write sent to it after it was
//              stopped, under the term it held then
//   reads      a read carrying an acknowledged write's X-Folio-Seq never missed the write
//   answers    no write was answered a 5xx other than 503
//   exits      no node process ended unless a fault explains it (a full disk); none refused to rejoin

import crypto from 'node:crypto';
import pg from 'pg';
import type { LedgerEvent } from '../engine/events.js';
import { changeView } from '../http/views/change-view.js';
import { recordsAfter } from '../replication/postgres/postgres-log-store.js';
import { decodeLogRecord, GENESIS_CHECKSUM } from '../wal/log-record-codec.js';
import { toJsonText } from '../wire/json-text.js';
import { parseJsonExact } from '../http/schemas/lossless-json.js';
import type { History, WriteOp } from './history.js';

export interface Violation {
  check: string;
  detail: string;
}

export interface CheckedNode {
  name: string;
  url: string;
}

/** A transaction as the log left it (its last version), with the seq that created it. */
interface LoggedTransaction {
  reference: string;
  parent: string;
  source: string;
  destination: string;
  currency: string;
  amount: bigint;
  status: string;
  inflight: boolean;
  action?: string;
  batch_id?: string;
  created_seq: number;
}

interface TermRange {
  term: number;
  first_seq: number;
  last_seq: number;
}

/** What the checker keeps of the group's log. */
export interface GroupLog {
  end_seq: number;
  records: number;
  /** Each record's seq range and term, in order. */
  places: TermRange[];
  /** A hash of each event's rendering as a change (index: seq). */
  change_hashes: string[];
  transactions: Map<string, LoggedTransaction>;
  by_reference: Map<string, string[]>;
  children: Map<string, string[]>;
  /** Sum of postings by `balance_id|field`. */
  postings: Map<string, bigint>;
  balances: Map<string, { currency: string; indicator: string }>;
}

const LOG_READ_RECORDS = 1_000;
/**
 * A feed not read to the log's end in this long is a violation: a minute, and more for a long log (a
 * feed gives thousands of changes a second; this allows 2 ms each).
 */
const FEED_TIMEOUT_MS_MIN = 60_000;
const FEED_TIMEOUT_MS_PER_CHANGE = 2;
const STATE_WAIT_MS = 30_000;
/** Violations of one check listed one by one; past this they are counted. */
const EXAMPLES_MAX = 20;

function hashOf(text: string): string {
  return crypto.createHash('sha1').update(text).digest('base64');
}

class Findings {
  readonly violations: Violation[] = [];
  private readonly counts = new Map<string, number>();

  add(check: string, detail: string): void {
    const count = (this.counts.get(check) ?? 0) + 1;
    this.counts.set(check, count);
    if (count <= EXAMPLES_MAX) this.violations.push({ check, detail });
    else if (count === EXAMPLES_MAX + 1) this.violations.push({ check, detail: '(more of these; counted in the figures)' });
  }

  countOf(check: string): number {
    return this.counts.get(check) ?? 0;
  }

  get total(): number {
    let total = 0;
    for (const count of this.counts.values()) total += count;
    return total;
  }
}

// --- the group's log ---

/** Reads the whole log from PostgreSQL, checking its shape, and keeps what the other checks need. */
export async function readGroupLog(postgresUrl: string, findings: Findings): Promise<GroupLog> {
  const log: GroupLog = {
    end_seq: 0, records: 0, places: [], change_hashes: [], transactions: new Map(), by_reference: new Map(), children: new Map(),
    postings: new Map(), balances: new Map(),
  };
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    let previousChecksum: Buffer = GENESIS_CHECKSUM;
    let previousTerm = 0;
    for (;;) {
      const stored = await recordsAfter(client, log.end_seq, LOG_READ_RECORDS);
      for (const record of stored) {
        if (record.first_seq !== log.end_seq + 1) findings.add('log', `the record after seq ${log.end_seq} starts at ${record.first_seq}`);
        if (record.term < previousTerm) findings.add('log', `the record at seq ${record.first_seq} has term ${record.term} after term ${previousTerm}`);
        const decoded = decodeLogRecord(record.first_seq, record.bytes);
        if (!decoded.prev_checksum.equals(previousChecksum)) findings.add('log', `the record at seq ${record.first_seq} does not chain to the one before it`);
        if (decoded.last_seq !== record.last_seq) findings.add('log', `the record at seq ${record.first_seq} says it ends at ${decoded.last_seq}, its row ${record.last_seq}`);
        previousChecksum = decoded.checksum;
        previousTerm = record.term;
        log.places.push({ term: record.term, first_seq: record.first_seq, last_seq: record.last_seq });
        decoded.events.forEach((event, offset) => keepEvent(log, record.first_seq + offset, event));
        log.end_seq = record.last_seq;
        log.records += 1;
      }
      if (stored.length < LOG_READ_RECORDS) break;
    }
  } finally {
    await client.end().catch(() => undefined);
  }
  return log;
}

function keepEvent(log: GroupLog, seq: number, event: LedgerEvent): void {
  log.change_hashes[seq] = hashOf(toJsonText(changeView(seq, event)));
  for (const balance of event.balances ?? []) log.balances.set(balance.balance_id, { currency: balance.currency, indicator: balance.indicator });
  for (const posting of event.postings ?? []) {
    const key = `${posting.balance_id}|${posting.field}`;
    log.postings.set(key, (log.postings.get(key) ?? 0n) + posting.amount);
  }
  for (const transaction of event.transactions ?? []) {
    const before = log.transactions.get(transaction.transaction_id);
    const kept: LoggedTransaction = {
      reference: transaction.reference, parent: transaction.parent_transaction, source: transaction.source, destination: transaction.destination,
      currency: transaction.currency, amount: transaction.precise_amount, status: transaction.status, inflight: transaction.inflight,
      created_seq: before?.created_seq ?? seq,
    };
    if (transaction.action !== undefined) kept.action = transaction.action;
    if (transaction.batch_id !== undefined) kept.batch_id = transaction.batch_id;
    log.transactions.set(transaction.transaction_id, kept);
    if (before) continue;
    append(log.by_reference, transaction.reference, transaction.transaction_id);
    if (transaction.parent_transaction !== '') append(log.children, transaction.parent_transaction, transaction.transaction_id);
  }
}

function append<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** The record holding `seq`, by binary search over the log's places. */
function placeOf(log: GroupLog, seq: number): TermRange | undefined {
  let low = 0;
  let high = log.places.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const place = log.places[middle]!;
    if (seq < place.first_seq) high = middle - 1;
    else if (seq > place.last_seq) low = middle + 1;
    else return place;
  }
  return undefined;
}

// --- the nodes ---

/** Reads a node's change feed as Server-Sent Events up to `endSeq`, comparing each change with the log's. */
async function checkFeed(node: CheckedNode, log: GroupLog, findings: Findings): Promise<void> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), Math.max(FEED_TIMEOUT_MS_MIN, log.end_seq * FEED_TIMEOUT_MS_PER_CHANGE));
  let expected = 1;
  try {
    if (log.end_seq === 0) return;
    const response = await fetch(`${node.url}/events?after=0`, { headers: { accept: 'text/event-stream' }, signal: controller.signal });
    if (response.status !== 200 || !response.body) {
      findings.add('feed', `${node.name}: GET /events answered ${response.status}`);
      return;
    }
    const decoder = new TextDecoder();
    let buffered = '';
    let id: number | undefined;
    for await (const chunk of response.body) {
      buffered += decoder.decode(chunk, { stream: true });
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        if (line.startsWith('id: ')) id = Number(line.slice(4));
        else if (line.startsWith('data: ') && id !== undefined) {
          if (id !== expected) findings.add('feed', `${node.name}: change ${id} came where ${expected} was due`);
          else if (log.change_hashes[id] !== hashOf(line.slice(6))) findings.add('feed', `${node.name}: change ${id} is not the group log's event ${id}`);
          expected = id + 1;
          id = undefined;
          if (expected > log.end_seq) return;
        }
      }
    }
    findings.add('feed', `${node.name}: the feed ended at change ${expected - 1} of ${log.end_seq}`);
  } catch (error) {
    findings.add('feed', `${node.name}: reading the feed failed after change ${expected - 1} of ${log.end_seq}: ${(error as Error).message}`);
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}

async function getJson(url: string, timeoutMs = 30_000): Promise<{ status: number; body: any }> {
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : parseJsonExact(text) };
}

async function stateHash(node: CheckedNode, seq: number): Promise<string> {
  const answer = await getJson(`${node.url}/admin/replication?at_seq=${seq}&state_hash=true&wait_ms=${STATE_WAIT_MS}`, STATE_WAIT_MS + 10_000);
  return answer.status === 200 ? String(answer.body.state_hash) : `answered ${answer.status}: ${JSON.stringify(answer.body)}`;
}

async function nodeBalances(node: CheckedNode): Promise<any[]> {
  const all: any[] = [];
  for (let offset = 0; ; offset += 100) {
    const page = await getJson(`${node.url}/balances?limit=100&offset=${offset}`);
    if (page.status !== 200) throw new Error(`${node.name}: GET /balances answered ${page.status}`);
    all.push(...(page.body as any[]));
    if ((page.body as any[]).length < 100) return all;
  }
}

const FIELDS = ['credit', 'debit', 'inflight_credit', 'inflight_debit'] as const;

/** Balances replayed from the log's transactions: applied ones move money, open holds hold what is left of them. */
function replayTransactions(log: GroupLog): Map<string, bigint> {
  const sums = new Map<string, bigint>();
  const add = (balance: string, field: string, amount: bigint): void => {
    const key = `${balance}|${field}`;
    sums.set(key, (sums.get(key) ?? 0n) + amount);
  };
  for (const [id, transaction] of log.transactions) {
    if (transaction.inflight) {
      const children = (log.children.get(id) ?? []).map((child) => log.transactions.get(child)!);
      if (children.some((child) => child.action === 'void')) continue;
      const committed = children.filter((child) => child.action === 'commit').reduce((sum, child) => sum + child.amount, 0n);
      const held = transaction.amount - committed;
      if (held === 0n) continue;
      add(transaction.source, 'inflight_debit', held);
      add(transaction.destination, 'inflight_credit', held);
    } else if (transaction.status === 'APPLIED') {
      add(transaction.source, 'debit', transaction.amount);
      add(transaction.destination, 'credit', transaction.amount);
    }
  }
  return sums;
}

async function checkBalances(node: CheckedNode, log: GroupLog, replayed: Map<string, bigint>, findings: Findings): Promise<void> {
  const balances = await nodeBalances(node);
  const seen = new Set<string>();
  const sums = new Map<string, { balance: bigint; inflight: bigint }>();
  for (const balance of balances) {
    const id = balance.balance_id as string;
    seen.add(id);
    for (const field of FIELDS) {
      const held = BigInt(balance[`${field}_balance`]);
      const posted = log.postings.get(`${id}|${field}`) ?? 0n;
      const replay = replayed.get(`${id}|${field}`) ?? 0n;
      if (held !== posted || held !== replay) {
        findings.add('balances', `${node.name}: ${balance.indicator} ${balance.currency} ${field} is ${held}; the log's postings say ${posted}, its transactions ${replay}`);
      }
    }
    const sum = sums.get(balance.currency) ?? { balance: 0n, inflight: 0n };
    sum.balance += BigInt(balance.balance);
    sum.inflight += BigInt(balance.inflight_balance);
    sums.set(balance.currency, sum);
  }
  for (const [currency, sum] of sums) {
    if (sum.balance !== 0n || sum.inflight !== 0n) findings.add('balances', `${node.name}: ${currency} sums to ${sum.balance} (inflight ${sum.inflight})`);
  }
  for (const id of log.balances.keys()) if (!seen.has(id)) findings.add('balances', `${node.name}: balance ${id} of the log is not listed`);
}

// --- the history ---

/** Whether an acknowledgement is of a write it made now (not a resend answered with an earlier one). */
function freshAck(op: WriteOp): boolean {
  if (!op.ack) return false;
  return op.kind === 'commit' || op.kind === 'void' || op.ack.status === 201;
}

function checkWrites(history: History, log: GroupLog, findings: Findings, figures: Figures): void {
  const sentReferences = new Set<string>();
  const actedOn = new Set<string>();
  const refunded = new Set<string>();
  const holdOps = new Map<string, WriteOp[]>();
  for (const op of history.writes) {
    for (const reference of op.references) sentReferences.add(reference);
    if ((op.kind === 'commit' || op.kind === 'void') && op.parent) {
      actedOn.add(op.parent);
      append(holdOps, op.parent, op);
    }
    if (op.kind === 'refund' && op.parent) refunded.add(op.parent);
    const tally = figures.writes[op.kind] ??= { ok: 0, refused: 0, unknown: 0, unknown_present: 0 };
    tally[op.outcome] += 1;
    for (const attempt of op.attempts) {
      const key = attempt.status === 0 ? `no answer (${attempt.code})` : `${attempt.status}${attempt.code ? ` ${attempt.code}` : ''}`;
      figures.answers[key] = (figures.answers[key] ?? 0) + 1;
      if (attempt.status >= 500 && attempt.status !== 503) findings.add('answers', `write ${op.id} (${op.kind}) was answered ${attempt.status} ${attempt.code ?? ''} by ${attempt.node}`);
    }
    if (op.expect_refusal && op.outcome === 'ok') findings.add('writes', `write ${op.id}: a void of hold ${op.parent}, whose commit was acknowledged, was accepted`);
    const present = presence(op, log, findings);
    if (op.outcome === 'unknown' && present) tally.unknown_present += 1;
  }
  // Children of holds and originals nobody acted on, and transactions nobody sent.
  for (const [id, transaction] of log.transactions) {
    if (sentReferences.has(transaction.reference)) continue;
    if (transaction.action === 'refund' && refunded.has(transaction.parent)) continue;
    if ((transaction.action === 'commit' || transaction.action === 'void') && actedOn.has(transaction.parent)) continue;
    findings.add('writes', `transaction ${id} (reference ${transaction.reference}, parent ${transaction.parent || '-'}) is in the log, but no client sent it`);
  }
  for (const [hold, ops] of holdOps) {
    const children = (log.children.get(hold) ?? []).map((child) => log.transactions.get(child)!);
    const commits = children.filter((child) => child.action === 'commit').length;
    const voids = children.filter((child) => child.action === 'void').length;
    if (commits > 1 || voids > 1 || (commits > 0 && voids > 0)) findings.add('writes', `hold ${hold} has ${commits} commits and ${voids} voids`);
    if (ops.some((op) => op.kind === 'commit' && op.outcome === 'ok') && voids > 0) findings.add('writes', `hold ${hold}: its commit was acknowledged, and it was voided`);
  }
}

/** Checks one write against the log; whether it is there. */
function presence(op: WriteOp, log: GroupLog, findings: Findings): boolean {
  const where = `write ${op.id} (${op.kind}, client ${op.client}, ${op.outcome}${op.refusal ? ` ${op.refusal.status} ${op.refusal.code}` : ''})`;
  if (op.kind === 'transfer' || op.kind === 'hold' || op.kind === 'bulk') {
    const found = op.references.map((reference) => log.by_reference.get(reference) ?? []);
    for (const [index, ids] of found.entries()) if (ids.length > 1) findings.add('writes', `${where}: reference ${op.references[index]} is in the log ${ids.length} times`);
    const present = found.filter((ids) => ids.length > 0).length;
    if (op.kind === 'bulk' && present !== 0 && present !== found.length) findings.add('writes', `${where}: ${present} of its ${found.length} transactions are in the log (an atomic batch)`);
    if (op.kind === 'bulk' && present > 0) {
      const batches = new Set(found.flat().map((id) => log.transactions.get(id)?.batch_id));
      if (batches.size !== 1) findings.add('writes', `${where}: its transactions are in ${batches.size} batches`);
      if (op.ack?.batch_id && !batches.has(op.ack.batch_id)) findings.add('writes', `${where}: acknowledged as batch ${op.ack.batch_id}, the log has ${[...batches].join(', ')}`);
    }
    if (op.outcome === 'ok') {
      if (present !== found.length) findings.add('writes', `${where}: acknowledged by ${op.ack?.node}, missing from the log`);
      if (op.ack?.transaction_id && found[0]?.[0] !== undefined && found[0][0] !== op.ack.transaction_id) {
        findings.add('writes', `${where}: acknowledged as ${op.ack.transaction_id}, the log has ${found[0][0]}`);
      }
    }
    if (op.outcome === 'refused' && present > 0) findings.add('writes', `${where}: refused, yet in the log`);
    return present > 0;
  }
  // commit, void, refund: the parent's child of that action.
  const action = op.kind === 'refund' ? 'refund' : op.kind;
  const children = (log.children.get(op.parent ?? '') ?? []).filter((child) => log.transactions.get(child)?.action === action);
  if (children.length > 1) findings.add('writes', `${where}: ${op.parent} has ${children.length} ${action} children`);
  if (op.outcome === 'ok') {
    if (children.length === 0) findings.add('writes', `${where}: acknowledged by ${op.ack?.node}, missing from the log`);
    else if (op.ack?.transaction_id && !children.includes(op.ack.transaction_id)) findings.add('writes', `${where}: acknowledged as ${op.ack.transaction_id}, the log has ${children.join(', ')}`);
  }
  // A refused commit, void (a void of a committed hold among them) or refund left no child of its action.
  if (op.outcome === 'refused' && children.length > 0) findings.add('writes', `${where}: refused, yet ${op.parent} has a ${action} child`);
  return children.length > 0;
}

interface TermTaken {
  term: number;
  holder_name: string;
}

async function readTerms(postgresUrl: string): Promise<TermTaken[]> {
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ term: string; holder_name: string }>('SELECT term, holder_name FROM nemesis_terms ORDER BY term, taken_at');
    return rows.map((row) => ({ term: Number(row.term), holder_name: row.holder_name }));
  } finally {
    await client.end().catch(() => undefined);
  }
}

function checkTerms(history: History, log: GroupLog, terms: TermTaken[], findings: Findings, figures: Figures): void {
  const holderOf = new Map<number, string>();
  for (const taken of terms) {
    if (holderOf.has(taken.term)) findings.add('terms', `term ${taken.term} was taken twice (${holderOf.get(taken.term)}, ${taken.holder_name})`);
    holderOf.set(taken.term, taken.holder_name);
  }
  figures.terms = holderOf.size;
  const ackersOf = new Map<number, Set<string>>();
  for (const op of history.writes) {
    if (op.outcome !== 'ok' || !freshAck(op) || !op.ack) continue;
    const place = placeOf(log, op.ack.seq);
    if (!place) {
      findings.add('terms', `write ${op.id} (${op.kind}) was acknowledged at seq ${op.ack.seq} by ${op.ack.node}; the log has no such seq`);
      continue;
    }
    const created = op.ack.transaction_id ? log.transactions.get(op.ack.transaction_id)?.created_seq : createdSeqOfBatch(op, log);
    if (created === undefined || created < place.first_seq || created > place.last_seq) {
      findings.add('terms', `write ${op.id} (${op.kind}) was acknowledged at seq ${op.ack.seq}, whose record (${place.first_seq}-${place.last_seq}) does not hold it (created at ${created})`);
    }
    const holder = holderOf.get(place.term);
    if (holder !== undefined && holder !== op.ack.node) findings.add('terms', `write ${op.id} was acknowledged by ${op.ack.node}; its record is of term ${place.term}, held by ${holder}`);
    const ackers = ackersOf.get(place.term) ?? new Set<string>();
    ackers.add(op.ack.node);
    ackersOf.set(place.term, ackers);
  }
  for (const [term, ackers] of ackersOf) if (ackers.size > 1) findings.add('terms', `term ${term}: new writes acknowledged by ${[...ackers].join(' and ')}`);
  const leadersOf = new Map<number, Set<string>>();
  for (const sample of history.health) {
    if (sample.role !== 'leader') continue;
    const leaders = leadersOf.get(sample.term) ?? new Set<string>();
    leaders.add(sample.node);
    leadersOf.set(sample.term, leaders);
  }
  for (const [term, leaders] of leadersOf) {
    if (leaders.size > 1) findings.add('terms', `term ${term}: ${[...leaders].join(' and ')} each said they led`);
    const holder = holderOf.get(term);
    for (const leader of leaders) if (holder !== undefined && leader !== holder) findings.add('terms', `${leader} said it led in term ${term}, held by ${holder}`);
  }
}

function createdSeqOfBatch(op: WriteOp, log: GroupLog): number | undefined {
  const id = log.by_reference.get(op.references[0] ?? '')?.[0];
  return id === undefined ? undefined : log.transactions.get(id)?.created_seq;
}

function checkPauses(history: History, log: GroupLog, findings: Findings, figures: Figures): void {
  for (const fault of history.faults) {
    if (fault.kind !== 'pause' || !fault.done || fault.began_at === undefined || fault.healed_at === undefined) continue;
    const stoppedAt = fault.began_at;
    const continuedAt = fault.healed_at;
    for (const op of history.writes) {
      if (op.outcome !== 'ok' || !op.ack || op.ack.node !== fault.node) continue;
      const attempt = op.attempts[op.ack.attempt]!;
      if (attempt.answered_at < continuedAt) continue;
      const term = placeOf(log, op.ack.seq)?.term;
      if (attempt.sent_at >= stoppedAt && freshAck(op) && term === fault.term) {
        findings.add('paused', `${fault.node}, stopped for ${Math.round(continuedAt - stoppedAt)} ms leading term ${fault.term}, acknowledged write ${op.id} sent to it ${Math.round(attempt.sent_at - stoppedAt)} ms after it was stopped`);
      } else if (attempt.sent_at < stoppedAt) {
        figures.late_acknowledgements += 1;
      }
    }
  }
}

function checkReads(history: History, findings: Findings, figures: Figures): void {
  for (const read of history.reads) {
    const key = read.status === 0 ? `no answer (${read.code})` : `${read.status}${read.code ? ` ${read.code}` : ''}`;
    figures.reads[key] = (figures.reads[key] ?? 0) + 1;
    if (read.status === 404 || read.code === 'REPL_SEQ_BEYOND_LOG' || (read.status === 200 && read.code !== undefined)) {
      findings.add('reads', `${read.node} answered ${read.status} ${read.code ?? ''} to a read of ${read.transaction_id} with X-Folio-Seq ${read.seq}`);
    }
  }
}

function checkExits(history: History, findings: Findings): void {
  for (const exit of history.exits) {
    if (exit.expected) continue;
    findings.add('exits', `${exit.node} ended (${exit.how}) with no fault to explain it:\n${exit.stderr_tail}`);
  }
}

export interface Figures {
  writes: Partial<Record<WriteOp['kind'], { ok: number; refused: number; unknown: number; unknown_present: number }>>;
  answers: Record<string, number>;
  reads: Record<string, number>;
  terms: number;
  /** Acknowledgements a paused leader sent after it woke, of writes sent (and committed) before it was stopped. */
  late_acknowledgements: number;
  log: { records: number; end_seq: number; transactions: number };
}

export interface CheckReport {
  violations: Violation[];
  violation_count: number;
  figures: Figures;
}

/** Every check, against every node given (all of them, running and caught up). */
export async function checkRun(history: History, postgresUrl: string, nodes: readonly CheckedNode[], say: (line: string) => void = () => undefined): Promise<CheckReport> {
  const findings = new Findings();
  const began = performance.now();
  const step = (what: string): void => say(`checking: ${what} (${Math.round(performance.now() - began)} ms)`);
  const figures: Figures = { writes: {}, answers: {}, reads: {}, terms: 0, late_acknowledgements: 0, log: { records: 0, end_seq: 0, transactions: 0 } };
  const log = await readGroupLog(postgresUrl, findings);
  figures.log = { records: log.records, end_seq: log.end_seq, transactions: log.transactions.size };
  step(`the group's log read: ${log.records} records to seq ${log.end_seq}`);
  const hashes = new Map<string, string>();
  for (const node of nodes) hashes.set(node.name, await stateHash(node, log.end_seq));
  if (new Set(hashes.values()).size > 1) findings.add('state', `state hashes at seq ${log.end_seq} differ: ${JSON.stringify([...hashes])}`);
  step('state hashes compared');
  for (const node of nodes) await checkFeed(node, log, findings);
  step('change feeds read');
  const replayed = replayTransactions(log);
  for (const node of nodes) await checkBalances(node, log, replayed, findings).catch((error: Error) => findings.add('balances', error.message));
  step('balances compared');
  checkWrites(history, log, findings, figures);
  checkTerms(history, log, await readTerms(postgresUrl), findings, figures);
  checkPauses(history, log, findings, figures);
  checkReads(history, findings, figures);
  checkExits(history, findings);
  return { violations: findings.violations, violation_count: findings.total, figures };
}

export { Findings };
