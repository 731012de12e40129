// The console's start: the page's guard against markup from strings (a Trusted Types policy that lets
// only the empty string through, which the chart library uses to clear its box), the sign-in, the
// header, and the router. Every page is a route in the address's fragment (`#/balances/bln_...`), so it
// can be shared and reloaded; the server serves the same static files for all of them. Moving to a page
// aborts everything the previous one had under way (calls, the change feed, timers) and moves the
// focus to the new page's heading.

import { ApiFailure, exactJsonSupported } from './api.js';
import { balancePage } from './balance.js';
import { append, el, failureBox, field, input, replace } from './dom.js';
import { hooksPage } from './hooks.js';
import { balancesPage, ledgersPage, transactionsPage } from './lists.js';
import { nodePage } from './node.js';
import { go, type PageContext } from './page.js';
import { reconciliationPage, reconciliationRunPage } from './reconciliation.js';
import { can, restore, servedMode, session, signIn, signOut } from './session.js';
import { transactionPage } from './transaction.js';

interface TrustedTypesFactory {
  createPolicy(name: string, rules: { createHTML?: (input: string) => string }): unknown;
}

/**
 * The page's Content-Security-Policy requires Trusted Types for every sink that parses markup or loads
 * script; this default policy is the only one allowed, and it lets nothing but the empty string through.
 */
function guardMarkup(): void {
  const factory = (window as unknown as { trustedTypes?: TrustedTypesFactory }).trustedTypes;
  factory?.createPolicy('default', {
    createHTML: (text: string) => {
      if (text === '') return '';
      throw new TypeError('the console never writes markup from text');
    },
  });
}

type Page = (ctx: PageContext) => void;

const ROUTES: Array<[RegExp, Page]> = [
  [/^\/ledgers$/, ledgersPage],
  [/^\/balances$/, balancesPage],
  [/^\/balances\/([^/]+)$/, balancePage],
  [/^\/transactions$/, transactionsPage],
  [/^\/transactions\/([^/]+)$/, transactionPage],
  [/^\/reconciliation$/, reconciliationPage],
  [/^\/reconciliation\/([^/]+)$/, reconciliationRunPage],
  [/^\/node$/, nodePage],
  [/^\/hooks$/, hooksPage],
];

const NAVIGATION: Array<[string, string]> = [
  ['/ledgers', 'Ledgers'], ['/balances', 'Balances'], ['/transactions', 'Transactions'], ['/reconciliation', 'Reconciliation'], ['/node', 'Node'], ['/hooks', 'Hooks'],
];

const main = document.getElementById('main') as HTMLElement;
const header = document.getElementById('session') as HTMLElement;
const nav = document.getElementById('navigation') as HTMLElement;
let leaving: { controller: AbortController; cleanups: Array<() => void> } | undefined;

function leavePage(): void {
  if (!leaving) return;
  leaving.controller.abort();
  for (const cleanup of leaving.cleanups) {
    try {
      cleanup();
    } catch {
      // a cleanup that fails must not keep the next page from drawing
    }
  }
  leaving = undefined;
  for (const dialog of document.querySelectorAll('dialog')) dialog.remove();
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function route(): void {
  leavePage();
  if (!session()) {
    signInPage();
    return;
  }
  const address = location.hash.replace(/^#/, '') || '/ledgers';
  const queryAt = address.indexOf('?');
  const path = safeDecode(queryAt < 0 ? address : address.slice(0, queryAt));
  const search = queryAt < 0 ? '' : address.slice(queryAt + 1);
  const found = ROUTES.map(([pattern, page]) => ({ match: pattern.exec(path), page })).find((candidate) => candidate.match);
  const controller = new AbortController();
  const cleanups: Array<() => void> = [];
  leaving = { controller, cleanups };
  replace(main);
  // Which address the page drawn is for (a test waits for it to match the address before reading).
  main.dataset.route = address;
  for (const linkElement of nav.querySelectorAll('a')) {
    const current = path === linkElement.dataset.route || path.startsWith(`${linkElement.dataset.route ?? ''}/`);
    if (current) linkElement.setAttribute('aria-current', 'page');
    else linkElement.removeAttribute('aria-current');
  }
  const ctx: PageContext = {
    main,
    params: found?.match?.slice(1) ?? [],
    query: new URLSearchParams(search),
    signal: controller.signal,
    onLeave: (cleanup) => cleanups.push(cleanup),
    heading: (title, ...after) => {
      // Buttons beside the heading are the page's actions; anything else is part of the heading.
      const actions = after.filter((part): part is HTMLButtonElement => part instanceof HTMLButtonElement);
      const heading = el('h1', { attrs: { tabindex: '-1' } }, title, ...after.filter((part) => !(part instanceof HTMLButtonElement)));
      document.title = `${heading.textContent ?? title} · Folio console`;
      main.prepend(el('div', { class: 'page-head' }, heading,
        actions.length > 0 ? el('div', { class: 'actions', attrs: { role: 'group', 'aria-label': 'Actions' } }, ...actions) : null));
      heading.focus();
      return heading;
    },
    reload: () => route(),
  };
  if (!found) {
    ctx.heading('Not found');
    append(main, el('p', null, `The console has no page at ${path}.`));
    return;
  }
  found.page(ctx);
}

function drawHeader(): void {
  const signedIn = session();
  replace(nav);
  replace(header);
  if (!signedIn) return;
  append(nav, el('ul', null, ...NAVIGATION.map(([path, label]) => el('li', null, el('a', { attrs: { href: `#${path}`, 'data-route': path } }, label)))));
  const writes = ['ledgers', 'balances', 'transactions', 'reconciliation'].some((resource) => can(resource, 'write'));
  const goTo = input('id', '', { type: 'search', placeholder: 'bln_…, txn_…, recon_…', autocomplete: 'off' });
  const jump = el('form', { class: 'jump', attrs: { role: 'search', 'aria-label': 'Go to a record by id' } }, field('Go to id', goTo), el('button', { attrs: { type: 'submit' } }, 'Go'));
  jump.addEventListener('submit', (event) => {
    event.preventDefault();
    const id = goTo.value.trim();
    if (id.startsWith('txn_')) go(`/transactions/${encodeURIComponent(id)}`);
    else if (id.startsWith('recon_')) go(`/reconciliation/${encodeURIComponent(id)}`);
    else if (id.startsWith('ldg_') || id === 'general_ledger_id') go(`/balances?f=${encodeURIComponent(`ledger_id:eq:${id}`)}`);
    else if (id !== '') go(`/balances/${encodeURIComponent(id)}`);
  });
  append(header, jump,
    el('p', { class: 'who' }, 'Signed in with ', el('strong', null, signedIn.name),
      el('span', { class: `access ${writes ? 'read-write' : 'read-only'}`, attrs: { 'data-access': writes ? 'read-write' : 'read-only' } }, writes ? 'read and write' : 'read-only'),
      el('span', { class: 'scopes', attrs: { title: signedIn.scopes.join(' ') } }, signedIn.scopes.join(', '))),
    signedIn.open ? null : el('button', { attrs: { type: 'button' }, on: { click: () => { signOut(); drawHeader(); route(); } } }, 'Sign out'));
}

function signInPage(): void {
  const proxy = servedMode() === 'proxy';
  replace(main);
  const heading = el('h1', { attrs: { tabindex: '-1' } }, 'Sign in to the Folio console');
  document.title = 'Sign in · Folio console';
  const key = input('key', '', { type: 'password', autocomplete: 'off', required: '', spellcheck: 'false' });
  const instance = input('instance_id', '', { autocomplete: 'off', required: '', spellcheck: 'false' });
  const outcome = el('div', { attrs: { 'aria-live': 'assertive' } });
  const form = el('form', { class: 'sign-in', attrs: { 'aria-labelledby': 'sign-in-heading' } },
    field(proxy ? 'Cloud access token or API key' : 'API key', key,
      'Kept in this tab only (its session storage) and sent to this server alone; closing the tab forgets it.'),
    proxy ? field('Instance id of the deployment', instance) : null,
    el('button', { class: 'primary', attrs: { type: 'submit' } }, 'Sign in'),
    outcome);
  heading.id = 'sign-in-heading';
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    replace(outcome, el('p', { class: 'loading' }, 'Checking the key…'));
    signIn(key.value, proxy ? instance.value : undefined).then(() => {
      key.value = '';
      drawHeader();
      route();
    }, (error: unknown) => {
      replace(outcome, failureBox(error, 'Signing in'));
    });
  });
  append(main, heading, el('p', null, proxy
    ? 'Each page reads the deployment\'s ledger through the cloud\'s proxy with your token; what your token may not do, the pages show refused.'
    : 'Each page reads the ledger through its API with your key; what your key may not do, the pages show refused, and writes are offered only when its scopes allow them.'), form);
  heading.focus();
}

async function start(): Promise<void> {
  guardMarkup();
  // The skip link's #main would be taken for a page's address: it moves the focus instead.
  document.querySelector('.skip-link')?.addEventListener('click', (event) => {
    event.preventDefault();
    (main.querySelector('h1') ?? main).focus();
  });
  if (!exactJsonSupported()) {
    replace(main, el('h1', null, 'This browser cannot show exact amounts'),
      el('p', null, 'The console reads amounts of any size exactly, which needs JSON.parse with source text access (Chrome 114, Firefox 135, Safari 18.4 or later).'));
    return;
  }
  try {
    await restore();
  } catch (error) {
    replace(main, el('h1', null, 'The server could not be reached'), failureBox(error));
    if (!(error instanceof ApiFailure)) throw error;
    return;
  }
  drawHeader();
  window.addEventListener('hashchange', route);
  route();
}

void start();
