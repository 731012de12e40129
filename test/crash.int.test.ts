// Crash safety of the real server. The built CLI runs as a child process on a temp data dir while
// concurrent clients send transfers (queued and skip_queue, between a few `@name` balances funded from
// an overdraft-allowed `@world`, some bound to fail for insufficient funds, many with client references).
// It is SIGKILLed at seeded points, mid-load included, and restarted on the same dir, each time checking
// that every acknowledged (2xx) transaction is there exactly once, by id and by reference, with what
// was acknowledged; that nothing refused or unanswered is half-applied; that every balance equals both
// its fold over the log and the sum of the applied transactions listed; and that every currency sums to
// zero. A second test sends SIGTERM under load: the process must exit 0 and keep everything acknowledged.
// Needs `npm run build` first. A failure names its seed; FOLIO_SEED=<seed> replays the same plan.

import fs from 'node:fs';
import t, { type Test } from 'tap';
import { startChildServer, type ChildServer } from './helpers/child-server.js';
import { SeededRandom, testSeeds } from './helpers/deterministic.js';
import { sendRequest, tempDataDir, type TestResponse } from './helpers/test-server.js';

const CONCURRENCY = 12;
const CURRENCIES = ['USD', 'EUR'];
const MEMBERS = ['@c0', '@c1', '@c2', '@c3', '@c4'];
/** A generous bound on how long a drained queue or a graceful exit may take: a hang guard, not a timing check. */
const PATIENCE_MS = 60_000;
/** Recently acknowledged transactions read back one by one through the id and reference routes. */
const ROUTE_SAMPLE = 150;

interface TransferBody {
  source: string;
  destination: string;
  currency: string;
  precise_amount: number | string;
  precision: number;
  allow_overdraft: boolean;
  skip_queue: boolean;
  description: string;
  reference?: string;
}

/** One request and what became of it: an answer, or a connection that failed before one came. */
interface Attempt {
  round: number;
  body: TransferBody;
  /** Set when this request resends an earlier acknowledged one; it must be answered with the same id. */
  retryOf?: string;
  status?: number;
  answer?: any;
  error?: string;
}

/** Everything the clients were told, across rounds and restarts. */
class Book {
  readonly attempts: Attempt[] = [];
  /** Transaction id -> the attempt that first acknowledged it. */
  readonly acknowledged = new Map<string, Attempt>();
  /** Client reference -> the id it was acknowledged with. */
  readonly idByReference = new Map<string, string>();
  /** Acknowledged attempts that carried a client reference: what a client may resend. */
  readonly resendable: Attempt[] = [];
  private references = 0;
  private readonly acknowledgedInRound = new Map<number, number>();
  private readonly waiters: Array<{ round: number; count: number; resolve: () => void }> = [];

  constructor(readonly seed: number) {}

  nextReference(round: number): string {
    this.references += 1;
    return `crash-${this.seed}-${round}-${this.references}`;
  }

  record(attempt: Attempt): void {
    this.attempts.push(attempt);
    if (attempt.status === undefined || attempt.status < 200 || attempt.status >= 300) return;
    const id = attempt.answer?.transaction_id as string;
    if (!this.acknowledged.has(id)) {
      this.acknowledged.set(id, attempt);
      if (attempt.body.reference !== undefined) this.resendable.push(attempt);
    }
    if (attempt.body.reference !== undefined && !this.idByReference.has(attempt.body.reference)) {
      this.idByReference.set(attempt.body.reference, id);
    }
    const count = (this.acknowledgedInRound.get(attempt.round) ?? 0) + 1;
    this.acknowledgedInRound.set(attempt.round, count);
    for (const waiter of this.waiters.filter((candidate) => candidate.round === attempt.round && candidate.count <= count)) {
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  }

  /** Resolves once `count` requests of the round have been acknowledged. */
  acknowledgedAtLeast(round: number, count: number): Promise<void> {
    if ((this.acknowledgedInRound.get(round) ?? 0) >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ round, count, resolve }));
  }
}

/** The seeded stream of requests: funding from @world, transfers between members, some bound to fail. */
class Plan {
  constructor(private readonly rng: SeededRandom, private readonly book: Book) {}

  next(round: number, queuedOnly: boolean): { body: TransferBody; retryOf?: string } {
    const rng = this.rng;
    if (this.book.resendable.length > 0 && rng.chance(0.04)) {
      // The same request again, as a client unsure of its first try would send it.
      const original = rng.pick(this.book.resendable);
      return {
        body: { ...original.body, skip_queue: queuedOnly ? false : rng.chance(0.5) },
        retryOf: original.answer.transaction_id as string,
      };
    }
    const currency = rng.pick(CURRENCIES);
    const member = () => rng.pick(MEMBERS);
    const roll = rng.next();
    let source: string;
    let destination: string;
    let amount: number | string = rng.between(1, 3000);
    if (roll < 0.25) {
      source = '@world';
      destination = member();
      if (rng.chance(0.05)) amount = rng.bigAmount(30).toString(); // far beyond 2^53, exact on the wire
    } else if (roll < 0.80) {
      source = member();
      destination = rng.pick(MEMBERS.filter((name) => name !== source));
    } else if (roll < 0.90) {
      source = member();
      destination = '@world';
    } else {
      // Bound to fail without overdraft, whichever member sends it.
      source = member();
      destination = rng.pick(MEMBERS.filter((name) => name !== source));
      amount = '100000000000000000000000000000000000';
    }
    const body: TransferBody = {
      source,
      destination,
      currency,
      precise_amount: amount,
      precision: 100,
      allow_overdraft: source === '@world',
      skip_queue: queuedOnly ? false : rng.chance(0.5),
      description: `round ${round}`,
    };
    if (rng.chance(0.7)) body.reference = this.book.nextReference(round);
    return { body };
  }
}

async function send(url: string, attempt: Attempt): Promise<Attempt> {
  try {
    const response: TestResponse = await sendRequest(url, 'POST', '/transactions', attempt.body);
    attempt.status = response.status;
    attempt.answer = response.body;
    if (response.status === 503) attempt.answer = { ...response.body, connection: response.headers.connection };
  } catch (error) {
    attempt.error = String((error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message);
  }
  return attempt;
}

/**
 * Clients sending until told to stop. When a connection fails, a client either stops (the server was
 * killed) or, with `persist`, pauses briefly and carries on, as clients with retries do while a server
 * shuts down. Each failure is recorded as an unanswered request.
 */
async function runLoad(
  url: string, plan: Plan, book: Book, round: number, options: { queuedOnly: boolean; persist: boolean }, stop: () => boolean,
): Promise<void> {
  const client = async (): Promise<void> => {
    while (!stop()) {
      const { body, retryOf } = plan.next(round, options.queuedOnly);
      const attempt = await send(url, { round, body, retryOf });
      book.record(attempt);
      if (attempt.error === undefined) continue;
      if (!options.persist) return;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, client));
}

async function getJson(url: string, route: string): Promise<TestResponse> {
  const response = await sendRequest(url, 'GET', route);
  if (response.status !== 200) throw new Error(`GET ${route} answered ${response.status}: ${response.text}`);
  return response;
}

async function listAll(url: string, route: string): Promise<any[]> {
  const all: any[] = [];
  for (let offset = 0; ; offset += 100) {
    const page = (await getJson(url, `${route}?limit=100&offset=${offset}`)).body as any[];
    all.push(...page);
    if (page.length < 100) return all;
  }
}

async function waitForEmptyQueue(url: string): Promise<void> {
  const deadline = Date.now() + PATIENCE_MS;
  for (;;) {
    const metrics = (await sendRequest(url, 'GET', '/metrics')).text;
    const depth = /^folio_mailbox_depth (\d+)/m.exec(metrics)?.[1];
    if (depth === '0') return;
    if (Date.now() > deadline) throw new Error(`queue still holds ${depth} transactions`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Runs `check` over items with a few requests in flight at a time; returns the problems it reported. */
async function checkEach<T>(items: T[], check: (item: T) => Promise<string | undefined>): Promise<string[]> {
  const problems: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const problem = await check(items[next++] as T);
      if (problem !== undefined) problems.push(problem);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return problems;
}

const first = (problems: string[]) => problems.slice(0, 15);

/**
 * Everything the server holds after a restart, checked against everything the clients were told. Only
 * attempts of `round` and earlier count; `fresh` are the attempts whose fate this restart decides.
 */
async function verify(t: Test, url: string, book: Book, label: string, fresh: Attempt[]): Promise<void> {
  await waitForEmptyQueue(url);
  const balances = await listAll(url, '/balances');
  const transactions = await listAll(url, '/transactions');
  const balanceById = new Map<string, any>(balances.map((balance) => [balance.balance_id, balance]));
  const byId = new Map<string, any>();
  const byReference = new Map<string, any>();
  const duplicates: string[] = [];
  for (const transaction of transactions) {
    if (byId.has(transaction.transaction_id)) duplicates.push(`id ${transaction.transaction_id}`);
    if (byReference.has(transaction.reference)) duplicates.push(`reference ${transaction.reference}`);
    byId.set(transaction.transaction_id, transaction);
    byReference.set(transaction.reference, transaction);
  }
  t.same(first(duplicates), [], `${label}: every transaction is listed once, and every reference once`);
  t.same(transactions.filter((transaction) => transaction.status === 'QUEUED').length, 0, `${label}: nothing left queued`);

  // What a transaction is, in terms of the request: names, currency, exact amount.
  const describe = (transaction: any): string => {
    const name = (id: string) => balanceById.get(id)?.indicator ?? `?${id}`;
    return `${name(transaction.source)}>${name(transaction.destination)} ${transaction.currency} ${BigInt(transaction.precise_amount)}`;
  };
  const requested = (body: TransferBody): string => `${body.source}>${body.destination} ${body.currency} ${BigInt(body.precise_amount)}`;

  // Every acknowledged transaction: present, as acknowledged, decided if it was queued.
  const ackProblems: string[] = [];
  for (const [id, attempt] of book.acknowledged) {
    const stored = byId.get(id);
    if (!stored) {
      ackProblems.push(`acknowledged ${id} (${attempt.status} ${attempt.answer?.status}) is missing`);
      continue;
    }
    if (describe(stored) !== requested(attempt.body)) ackProblems.push(`${id} is ${describe(stored)}, was sent as ${requested(attempt.body)}`);
    if (stored.reference !== attempt.answer.reference) ackProblems.push(`${id} has reference ${stored.reference}, acknowledged ${attempt.answer.reference}`);
    const settled = stored.status === 'APPLIED' || stored.status === 'REJECTED';
    if (attempt.answer.status === 'APPLIED' ? stored.status !== 'APPLIED' : !settled) {
      ackProblems.push(`${id} acknowledged ${attempt.answer.status} is now ${stored.status}`);
    }
  }
  for (const attempt of book.attempts) {
    if (attempt.retryOf !== undefined && attempt.status !== undefined && attempt.status < 300) {
      if (attempt.status !== 200 || attempt.answer.transaction_id !== attempt.retryOf) {
        ackProblems.push(`retry of ${attempt.retryOf} answered ${attempt.status} with ${attempt.answer.transaction_id}`);
      }
    }
  }
  t.same(first(ackProblems), [], `${label}: all ${book.acknowledged.size} acknowledged transactions are there as acknowledged`);

  // The routes by id and by reference agree, for a sample of the transactions acknowledged since the
  // last check (the listing above already covered all of them).
  const freshSet = new Set(fresh);
  const recent = [...book.acknowledged.entries()].filter(([, attempt]) => freshSet.has(attempt)).slice(-ROUTE_SAMPLE);
  const routeProblems = await checkEach(recent, async ([id, attempt]) => {
    const one = await sendRequest(url, 'GET', `/transactions/${id}`);
    if (one.status !== 200 || one.body.transaction_id !== id) return `GET /transactions/${id} answered ${one.status}`;
    const reference = attempt.answer.reference as string;
    const found = await sendRequest(url, 'GET', `/transactions/reference/${encodeURIComponent(reference)}`);
    if (found.status !== 200 || found.body.transaction_id !== id) return `reference ${reference} answered ${found.status} ${found.body?.transaction_id}`;
    return undefined;
  });
  t.same(first(routeProblems), [], `${label}: ${recent.length} recently acknowledged found by id and by reference (sample)`);

  // Refused requests left nothing; unanswered ones are either absent or whole.
  const fateProblems: string[] = [];
  for (const attempt of fresh) {
    const reference = attempt.body.reference;
    if (attempt.status !== undefined && attempt.status >= 500 && attempt.status !== 503) {
      fateProblems.push(`a request was answered ${attempt.status}: ${JSON.stringify(attempt.answer)}`);
    }
    if (reference === undefined || attempt.retryOf !== undefined) continue;
    const stored = byReference.get(reference);
    if (attempt.status !== undefined && attempt.status >= 400) {
      if (stored) fateProblems.push(`refused ${reference} (${attempt.status}) was recorded as ${stored.transaction_id}`);
    } else if (attempt.error !== undefined && stored && describe(stored) !== requested(attempt.body)) {
      fateProblems.push(`unanswered ${reference} was recorded as ${describe(stored)}, sent as ${requested(attempt.body)}`);
    }
  }
  t.same(first(fateProblems), [], `${label}: refused requests left nothing, unanswered ones are absent or whole`);

  // Balances: each equals the applied transactions listed, and its fold over the log; zero-sum.
  const flows = new Map<string, { credit: bigint; debit: bigint }>();
  const flow = (id: string) => flows.get(id) ?? flows.set(id, { credit: 0n, debit: 0n }).get(id)!;
  for (const transaction of transactions) {
    if (transaction.status !== 'APPLIED') continue;
    flow(transaction.source).debit += BigInt(transaction.precise_amount);
    flow(transaction.destination).credit += BigInt(transaction.precise_amount);
  }
  const sums = new Map<string, bigint>();
  const balanceProblems = await checkEach(balances, async (balance) => {
    sums.set(balance.currency, (sums.get(balance.currency) ?? 0n) + BigInt(balance.balance));
    const expected = flows.get(balance.balance_id) ?? { credit: 0n, debit: 0n };
    if (BigInt(balance.credit_balance) !== expected.credit || BigInt(balance.debit_balance) !== expected.debit) {
      return `${balance.indicator} ${balance.currency} is ${balance.credit_balance}/${balance.debit_balance}, transactions say ${expected.credit}/${expected.debit}`;
    }
    const folded = (await getJson(url, `/balances/${balance.balance_id}?from_source=true`)).body.balance;
    for (const field of ['balance', 'credit_balance', 'debit_balance', 'version']) {
      if (BigInt(folded[field]) !== BigInt(balance[field])) return `${balance.indicator} ${balance.currency} ${field} is ${balance[field]}, folds to ${folded[field]}`;
    }
    return undefined;
  });
  t.same(first(balanceProblems), [], `${label}: every balance equals its transactions and its fold`);
  t.same([...sums].filter(([, sum]) => sum !== 0n).map(([currency, sum]) => `${currency} ${sum}`), [], `${label}: every currency sums to zero`);
}

/**
 * After a crash a careful client resends what went unanswered, with the same reference. It is answered
 * 200 with the transaction if the first try got in, and otherwise handled as new.
 */
async function resendUnanswered(url: string, book: Book, round: number, unanswered: Attempt[]): Promise<string[]> {
  const problems: string[] = [];
  for (const lost of unanswered) {
    if (lost.body.reference === undefined || lost.retryOf !== undefined) continue;
    const present = await sendRequest(url, 'GET', `/transactions/reference/${encodeURIComponent(lost.body.reference)}`);
    const attempt = await send(url, { round, body: lost.body });
    book.record(attempt);
    if (present.status === 200) {
      if (attempt.status !== 200 || attempt.answer.transaction_id !== present.body.transaction_id) {
        problems.push(`resent ${lost.body.reference} (recorded as ${present.body.transaction_id}) answered ${attempt.status}`);
      }
    } else if (attempt.status !== 201 && !(attempt.status === 400 && attempt.answer?.error_detail?.code === 'TXN_INSUFFICIENT_FUNDS')) {
      problems.push(`resent ${lost.body.reference} (not recorded) answered ${attempt.status} ${JSON.stringify(attempt.answer)}`);
    }
  }
  return problems;
}

/**
 * Waits for the round's kill point, but fails instead of hanging if the server exits on its own or
 * every client gives up first.
 */
async function untilAcknowledged(
  book: Book, round: number, count: number, server: ChildServer, load: Promise<void>, ending: () => boolean,
): Promise<void> {
  const early = (what: string) => {
    if (!ending()) throw new Error(`${what} before ${count} requests were acknowledged:\n${server.stderr().slice(-4000)}`);
  };
  const guards = [server.exited.then((code) => early(`the server exited (${code})`)), load.then(() => early('every client stopped'))];
  // A guard that loses the race may still fail later; that is not an error then.
  for (const guard of guards) guard.catch(() => undefined);
  await Promise.race([book.acknowledgedAtLeast(round, count), ...guards]);
}

interface KillPoint {
  kind: 'at start' | 'mid-load' | 'queued burst';
  /** Acknowledgements in the round before the SIGKILL. */
  acknowledgements: number;
}

function killPoints(rng: SeededRandom): KillPoint[] {
  return [
    { kind: 'at start', acknowledgements: rng.between(0, 3) },
    { kind: 'mid-load', acknowledgements: rng.between(50, 300) },
    { kind: 'queued burst', acknowledgements: rng.between(50, 250) },
    { kind: 'mid-load', acknowledgements: rng.between(5, 60) },
    { kind: 'mid-load', acknowledgements: rng.between(150, 400) },
  ];
}

function onFailure(t: Test, seed: number, server: () => ChildServer | undefined): void {
  t.teardown(() => {
    if (t.passing()) return;
    t.comment(`failed with seed ${seed}: replay with FOLIO_SEED=${seed} npx tap test/crash.int.test.ts`);
    const stderr = server()?.stderr() ?? '';
    if (stderr !== '') t.comment(`server stderr (tail):\n${stderr.slice(-4000)}`);
  });
}

// One seed per run (the server's timing varies anyway); FOLIO_SEED fixes it.
for (const seed of testSeeds([])) {
  t.test(`SIGKILL at seeded points under load, seed ${seed}`, async (t) => {
    const dataDir = tempDataDir('folio-crash');
    const rng = new SeededRandom(seed);
    const book = new Book(seed);
    const plan = new Plan(rng, book);
    let server: ChildServer | undefined;
    onFailure(t, seed, () => server);
    t.teardown(async () => {
      if (server && server.process.exitCode === null && server.process.signalCode === null) await server.kill();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });

    let fresh: Attempt[] = [];
    const points = killPoints(rng);
    for (let round = 0; round <= points.length; round += 1) {
      server = await startChildServer(dataDir);
      const firstAttempt = book.attempts.length;
      if (round > 0) {
        const point = points[round - 1] as KillPoint;
        const label = `after kill ${round} (${point.kind}, ${point.acknowledgements} acknowledged)`;
        await verify(t, server.url, book, label, fresh);
        const unanswered = fresh.filter((attempt) => attempt.error !== undefined);
        const resent = await resendUnanswered(server.url, book, round, unanswered);
        t.same(first(resent), [], `${label}: ${unanswered.length} unanswered requests resent by reference, answered consistently`);
      }
      if (round === points.length) {
        await verify(t, server.url, book, 'after the last resends', book.attempts.slice(firstAttempt));
        break;
      }

      const point = points[round] as KillPoint;
      let killed = false;
      const load = runLoad(server.url, plan, book, round, { queuedOnly: point.kind === 'queued burst', persist: false }, () => killed);
      await untilAcknowledged(book, round, point.acknowledgements, server, load, () => killed);
      killed = true;
      await server.kill();
      await load;
      fresh = book.attempts.slice(firstAttempt);
      const cutOff = fresh.filter((attempt) => attempt.error !== undefined).length;
      t.comment(`round ${round}: ${point.kind}, ${fresh.length - cutOff} answered, ${cutOff} cut off by the kill`);
    }

    // The last restart verified everything; a clean stop must also work on this history.
    const finalServer = server as ChildServer;
    t.equal(await finalServer.terminate(), 0, 'the server stops cleanly after all the crashes');
  });
}

t.test('SIGTERM under load drains, exits 0 and keeps everything acknowledged', async (t) => {
  const seed = testSeeds([5150])[0] as number;
  const dataDir = tempDataDir('folio-sigterm');
  const rng = new SeededRandom(seed);
  const book = new Book(seed);
  const plan = new Plan(rng, book);
  let server: ChildServer | undefined = await startChildServer(dataDir);
  onFailure(t, seed, () => server);
  t.teardown(async () => {
    if (server && server.process.exitCode === null && server.process.signalCode === null) await server.kill();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const acknowledgements = rng.between(50, 250);
  let stopped = false;
  let terminating = false;
  // The clients keep sending through the shutdown, as real ones would: some requests are in flight
  // when the signal lands, later ones meet the draining server or a closed port, until it is gone.
  const load = runLoad(server.url, plan, book, 0, { queuedOnly: false, persist: true }, () => stopped);
  await untilAcknowledged(book, 0, acknowledgements, server, load, () => terminating);
  terminating = true;
  const hang = new Promise<string>((resolve) => setTimeout(() => resolve('still running'), PATIENCE_MS).unref());
  const exit = await Promise.race([server.terminate(), hang]);
  stopped = true;
  await load;
  t.equal(exit, 0, 'SIGTERM ends the process with exit code 0');

  const shuttingDown = book.attempts.filter((attempt) => attempt.answer?.error_detail?.code === 'GEN_SHUTTING_DOWN');
  t.same(
    shuttingDown.filter((attempt) => attempt.answer.connection !== 'close').length, 0,
    `the ${shuttingDown.length} requests refused while draining were told to close their connection`,
  );
  const unexpected = book.attempts.filter((attempt) => attempt.status !== undefined && ![200, 201, 400, 503].includes(attempt.status));
  t.same(unexpected.map((attempt) => `${attempt.status} ${JSON.stringify(attempt.answer)}`), [], 'no request got an unexpected status');
  t.comment(`${book.acknowledged.size} acknowledged, ${shuttingDown.length} refused while draining, `
    + `${book.attempts.filter((attempt) => attempt.error !== undefined).length} met a closed connection or port`);

  server = await startChildServer(dataDir);
  await verify(t, server.url, book, 'after SIGTERM', book.attempts);
  t.equal(await server.terminate(), 0, 'an idle server also stops with exit code 0');
});
