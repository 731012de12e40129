// The ledger a run starts from: a few ledgers, funded balances in every currency the hints use, identities,
// open holds, settled transactions, a hook and API keys, created through the API so that the pools hold
// live ids from the first case on. Every set-up write is learned like a fuzz answer, so it is checked
// after restarts too. Through the cloud's proxy (`via`) it makes no hook and no API key: those are the
// operator's, and the proxy does not forward them.

import { CURRENCIES } from './field-hints.js';
import { fromPlain } from './fuzz-json.js';
import { applyVia } from './fuzz-request.js';
import type { FuzzSession } from './fuzz-session.js';
import type { RouteVia } from './route-table.js';

const BALANCES_PER_CURRENCY = 3;
const HOLDS = 12;
const FUNDING = 10n ** 15n;

async function postVia(session: FuzzSession, routeKey: string, path: string, body: Record<string, unknown>, via?: RouteVia): Promise<any> {
  const text = JSON.stringify(body, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
  const answer = await session.sendLearned({
    request: applyVia({ method: routeKey.slice(0, routeKey.indexOf(' ')), path, headers: { 'content-type': 'application/json' }, body: text }, via),
    routeKey, params: [], body: fromPlain(body), bodyDescription: '',
  });
  if (answer.kind !== 'answer' || answer.status >= 300) {
    throw new Error(`set-up ${routeKey} failed: ${answer.kind === 'answer' ? `${answer.status} ${answer.text}` : answer.error}`);
  }
  return JSON.parse(answer.text);
}

export async function setUpLedger(session: FuzzSession, via?: RouteVia): Promise<void> {
  const post = (routeKey: string, path: string, body: Record<string, unknown>): Promise<any> => postVia(session, routeKey, path, body, via);
  const ledgers = ['general_ledger_id'];
  for (const name of ['fuzz ledger one', 'fuzz ledger two']) ledgers.push((await post('POST /ledgers', '/ledgers', { name, meta_data: { purpose: 'fuzz' } })).ledger_id);
  const funded: Array<{ id: string; currency: string }> = [];
  for (const currency of CURRENCIES) {
    for (let index = 0; index < BALANCES_PER_CURRENCY; index += 1) {
      // Indicators name balances of the general ledger only (as in Blnk).
      const ledgerId = ledgers[index % ledgers.length] as string;
      const indicator = ledgerId === 'general_ledger_id' ? { indicator: `@setup-${currency}-${index}` } : {};
      const balance = await post('POST /balances', '/balances', { ledger_id: ledgerId, currency, ...indicator });
      funded.push({ id: balance.balance_id, currency });
      await post('POST /transactions', '/transactions', {
        description: 'fuzz funding', precise_amount: FUNDING, currency, source: '@world', destination: balance.balance_id, allow_overdraft: true, skip_queue: true,
      });
    }
  }
  for (const [index, identityType] of ['individual', 'organization', 'individual'].entries()) {
    await post('POST /identities', '/identities', { identity_type: identityType, first_name: `Fuzz ${index}`, email_address: `fuzz${index}@example.com` });
  }
  for (let index = 0; index < HOLDS; index += 1) {
    const source = funded[index % funded.length]!;
    await post('POST /transactions', '/transactions', {
      description: 'fuzz hold', precise_amount: 1_000 + index, currency: source.currency, source: source.id, destination: `@fuzz-${index}`, inflight: true, skip_queue: true,
    });
  }
  if (via) return;
  await post('POST /hooks', '/hooks', { name: 'fuzz hook', url: 'https://hooks.example.invalid/folio', type: 'POST_TRANSACTION', active: false, timeout: 1, retry_count: 0 });
  const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
  for (const owner of ['owner-a', 'owner-b']) {
    await post('POST /api-keys', '/api-keys', { name: `fuzz key of ${owner}`, owner, scopes: ['transactions:*', 'balances:read'], expires_at: expiresAt });
  }
}
