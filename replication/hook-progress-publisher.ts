// A leader's hook delivery progress, published in PostgreSQL (replication/postgres/group-settings-store.ts) each
// time its outbox saves a cursor, so the node that takes over resumes delivery there. Only the newest
// cursor matters: while one write is under way later cursors replace each other, and the newest goes
// next. A write that fails is logged and left: the next save publishes again, and a stale cursor only
// repeats deliveries.

import type { OutboxCursor } from '../hooks/outbox-store.js';
import { publishHookProgress } from './postgres/group-settings-store.js';
import type { PostgresClient } from './postgres/postgres-client.js';

interface Pending {
  client: PostgresClient;
  term: number;
  cursor: OutboxCursor;
}

export class HookProgressPublisher {
  private next: Pending | undefined;
  private publishing = false;

  constructor(private readonly logger: { warn(details: object, message: string): void }) {}

  publish(client: PostgresClient, term: number, cursor: OutboxCursor): void {
    this.next = { client, term, cursor };
    if (!this.publishing) void this.drain();
  }

  private async drain(): Promise<void> {
    this.publishing = true;
    try {
      while (this.next) {
        const { client, term, cursor } = this.next;
        this.next = undefined;
        await publishHookProgress(client, term, { low_seq: cursor.low_seq, hooks: JSON.stringify(cursor.hooks) });
      }
    } catch (error) {
      this.logger.warn({ err: (error as Error).message }, 'could not publish hook delivery progress');
    } finally {
      this.publishing = false;
    }
  }
}
