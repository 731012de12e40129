// Reconciliation as the HTTP layer reaches it (http/ports/reconciliation-port.ts): the runner for starting runs
// and reading their records, the query index for paging through a recorded run's results.

import { matchesPage, unmatchedPage } from '../index/reconciliation-queries.js';
import type { SecondaryIndex } from '../index/secondary-index.js';
import { WAIT_MS_MAX_DEFAULT } from '../index/secondary-index.js';
import type { ReconciliationPort } from '../http/ports/reconciliation-port.js';
import type { ReconciliationRunner } from '../reconciliation/reconciliation-runner.js';

export function reconciliationService(runner: ReconciliationRunner, index: SecondaryIndex): ReconciliationPort {
  return {
    startBackground: (command, dryRun) => runner.startBackground(command, dryRun),
    runInstant: (request, records, dryRun) => runner.runInstant(request, records, dryRun),
    record: (reconciliationId) => runner.record(reconciliationId),
    dryRun: (reconciliationId) => runner.dryRun(reconciliationId),
    matches: (reconciliationId, offset, limit, visibleSeq) =>
      index.reconciliationRead(visibleSeq, WAIT_MS_MAX_DEFAULT, (reader) => matchesPage(reader, reconciliationId, offset, limit)),
    unmatched: (reconciliationId, uploadId, offset, limit, visibleSeq) =>
      index.reconciliationRead(visibleSeq, WAIT_MS_MAX_DEFAULT, (reader) => unmatchedPage(reader, reconciliationId, uploadId, offset, limit)),
  };
}
