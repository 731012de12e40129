// Building the page: elements made with the DOM's own methods, text always set as text (never parsed
// as markup, so nothing the ledger holds can become markup or script), and the few parts every page
// uses: amounts and times, tables with captions, a pager, the error envelope shown plainly, links to
// records, and a dialog that confirms a write and shows its answer.

import type { Failure } from './api.js';
import { ApiFailure } from './api.js';
import { amountDigits, formatAmount, isSet, localTime, utcTitle } from './format.js';

export type Child = Node | string | number | null | undefined | false;

export interface Props {
  class?: string;
  id?: string;
  /** Attributes set as they are (aria-*, role, href, type, ...). */
  attrs?: Record<string, string | undefined>;
  on?: Partial<{ [K in keyof HTMLElementEventMap]: (event: HTMLElementEventMap[K]) => void }>;
}

/** An element with its children; strings become text nodes. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props | null = null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  if (props?.class) element.className = props.class;
  if (props?.id) element.id = props.id;
  for (const [name, value] of Object.entries(props?.attrs ?? {})) if (value !== undefined) element.setAttribute(name, value);
  for (const [name, handler] of Object.entries(props?.on ?? {})) element.addEventListener(name, handler as EventListener);
  append(element, ...children);
  return element;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

/** Replaces everything inside `parent`. */
export function replace(parent: Node, ...children: Child[]): void {
  while (parent.firstChild) parent.removeChild(parent.firstChild);
  append(parent, ...children);
}

/** A link inside the console (`#/balances/bln_...`). */
export function link(route: string, text: Child, label?: string): HTMLAnchorElement {
  return el('a', { attrs: { href: `#${route}`, 'aria-label': label } }, text);
}

export function recordLink(id: string): Child {
  if (id === '') return '—';
  if (id.startsWith('bln_')) return link(`/balances/${encodeURIComponent(id)}`, el('code', null, id));
  if (id.startsWith('txn_')) return link(`/transactions/${encodeURIComponent(id)}`, el('code', null, id));
  if (id.startsWith('recon_')) return link(`/reconciliation/${encodeURIComponent(id)}`, el('code', null, id));
  if (id.startsWith('ldg_') || id === 'general_ledger_id') return link(`/balances?f=${encodeURIComponent(`ledger_id:eq:${id}`)}`, el('code', null, id));
  return el('code', null, id);
}

/**
 * An exact amount: formatted in major units at `precision` (undefined: not known, shown in the smallest
 * unit), with the exact digits and precision in data attributes and the title.
 */
export function amount(value: unknown, precision: string | undefined, currency?: string): HTMLElement {
  const digits = amountDigits(value);
  const shown = formatAmount(digits, precision);
  const title = precision === undefined ? `${digits} in the smallest unit (precision not known)` : `${digits} in the smallest unit, precision ${precision}`;
  const element = el('span', { class: `amount${digits.startsWith('-') ? ' negative' : ''}`, attrs: { title, 'data-exact': digits, 'data-precision': precision ?? '' } }, shown);
  if (currency) append(element, ' ', el('span', { class: 'currency' }, currency));
  if (precision === undefined) append(element, ' ', el('span', { class: 'unit-note' }, '(smallest unit)'));
  return element;
}

/** A time in the viewer's zone, UTC on hover; a dash when unset. */
export function time(iso: unknown): Node {
  if (!isSet(iso)) return el('span', { class: 'unset', attrs: { title: 'not set' } }, '—');
  return el('time', { attrs: { datetime: iso, title: utcTitle(iso) } }, localTime(iso));
}

export interface Column<Row> {
  header: string;
  cell: (row: Row) => Child;
  /** Right-aligned (amounts, counts). */
  numeric?: boolean;
}

/** A table with a caption (its accessible name) and column headers. */
export function table<Row>(caption: string, columns: Column<Row>[], rows: Row[], empty = 'Nothing to show.'): HTMLElement {
  if (rows.length === 0) return el('p', { class: 'empty', attrs: { role: 'status' } }, `${caption}: ${empty}`);
  const head = el('thead', null, el('tr', null, ...columns.map((column) => el('th', { attrs: { scope: 'col' }, class: column.numeric ? 'numeric' : undefined }, column.header))));
  const body = el('tbody', null, ...rows.map((row) => el('tr', null, ...columns.map((column) => el('td', { class: column.numeric ? 'numeric' : undefined }, column.cell(row))))));
  return el('div', { class: 'table-scroll', attrs: { role: 'region', 'aria-label': caption, tabindex: '0' } }, el('table', null, el('caption', null, caption), head, body));
}

/** Label/value pairs. */
export function facts(pairs: Array<[string, Child]>, label?: string): HTMLElement {
  const list = el('dl', { class: 'facts', attrs: { 'aria-label': label } });
  for (const [term, value] of pairs) append(list, el('div', null, el('dt', null, term), el('dd', null, value)));
  return list;
}

/** The error envelope, as the API gave it: status, code, message and details. */
export function failureBox(error: unknown, doing?: string): HTMLElement {
  const failure: Failure = error instanceof ApiFailure ? error.failure : { status: 0, code: 'CONSOLE_ERROR', message: (error as Error)?.message ?? String(error) };
  const box = el('div', { class: 'failure', attrs: { role: 'alert' } },
    el('p', { class: 'failure-title' }, doing ? `${doing}: refused` : 'Refused',
      failure.status > 0 ? ` (HTTP ${failure.status})` : ''),
    facts([['Code', el('code', { attrs: { 'data-code': failure.code } }, failure.code)], ['Message', failure.message]]));
  if (failure.details !== undefined) append(box, el('pre', { class: 'details' }, JSON.stringify(failure.details, null, 2)));
  return box;
}

/** A section with a heading; its body is filled in later (loading meanwhile). */
export function section(title: string, level: 2 | 3 = 2): { element: HTMLElement; body: HTMLElement } {
  const id = `section-${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  const body = el('div', { class: 'section-body', attrs: { 'aria-busy': 'true' } }, el('p', { class: 'loading' }, 'Loading…'));
  const element = el('section', { attrs: { 'aria-labelledby': id } }, el(level === 2 ? 'h2' : 'h3', { id }, title), body);
  return { element, body };
}

/** Shows what a section holds, now: it is no longer loading. */
export function settle(body: HTMLElement, ...children: Child[]): void {
  replace(body, ...children);
  body.setAttribute('aria-busy', 'false');
}

/** Fills a section body with what `load` makes, or with the refusal; never leaves it loading. */
export async function fill(body: HTMLElement, load: () => Promise<Child | Child[]>): Promise<void> {
  body.setAttribute('aria-busy', 'true');
  try {
    const made = await load();
    replace(body, ...(Array.isArray(made) ? made : [made]));
  } catch (error) {
    if ((error as Error)?.name === 'AbortError') return;
    replace(body, failureBox(error));
  } finally {
    body.setAttribute('aria-busy', 'false');
  }
}

/** Says something to screen readers (the page's polite live region). */
export function announce(text: string): void {
  const announcer = document.getElementById('announcer');
  if (!announcer) return;
  announcer.textContent = '';
  // A change after clearing is what makes a repeated message be read again.
  requestAnimationFrame(() => {
    announcer.textContent = text;
  });
}

export interface PageState {
  offset: number;
  limit: number;
  /** When the API counted the whole set. */
  total?: number;
  /** Rows on this page. */
  shown: number;
}

/** Previous / next, with where this page is in the whole. */
export function pager(label: string, state: PageState, go: (offset: number) => void): HTMLElement {
  const first = state.shown === 0 ? 0 : state.offset + 1;
  const last = state.offset + state.shown;
  const more = state.total !== undefined ? last < state.total : state.shown === state.limit;
  const where = state.total !== undefined ? `${first}–${last} of ${state.total}` : `${first}–${last}`;
  return el('nav', { class: 'pager', attrs: { 'aria-label': `${label} pages` } },
    el('button', { attrs: { type: 'button', ...(state.offset === 0 ? { disabled: '' } : {}) }, on: { click: () => go(Math.max(0, state.offset - state.limit)) } }, '← Previous'),
    el('span', { attrs: { 'aria-live': 'polite' } }, where),
    el('button', { attrs: { type: 'button', ...(more ? {} : { disabled: '' }) }, on: { click: () => go(state.offset + state.limit) } }, 'Next →'));
}

/** A labelled form field. */
export function field(label: string, control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement, hint?: string): HTMLElement {
  const id = control.id || `field-${Math.random().toString(36).slice(2, 10)}`;
  control.id = id;
  const hintId = hint ? `${id}-hint` : undefined;
  if (hintId) control.setAttribute('aria-describedby', hintId);
  return el('div', { class: 'field' }, el('label', { attrs: { for: id } }, label), control, hint ? el('small', { id: hintId }, hint) : null);
}

export function input(name: string, value = '', attrs: Record<string, string> = {}): HTMLInputElement {
  const element = el('input', { attrs: { name, ...attrs } });
  element.value = value;
  return element;
}

export function select(name: string, options: Array<[value: string, label: string]>, value = ''): HTMLSelectElement {
  const element = el('select', { attrs: { name } }, ...options.map(([optionValue, label]) => el('option', { attrs: { value: optionValue } }, label)));
  element.value = value;
  return element;
}

export interface WriteDialog {
  /** The dialog's title. */
  title: string;
  /** What the write will do, and its inputs. */
  body: Child[];
  /** The confirming button's text (`Commit`, `Void`, ...). */
  confirm: string;
  /**
   * Carries the write out once confirmed: what to show of the answer, or throws (an ApiFailure is shown
   * as the API gave it, and the dialog stays open to try again or cancel).
   */
  run: () => Promise<Child>;
  /** After a success, once the person closes the dialog. */
  done?: () => void;
}

/** A modal dialog that confirms a write, carries it out, and shows the API's answer or refusal. */
export function writeDialog(spec: WriteDialog): void {
  const titleId = `dialog-${Math.random().toString(36).slice(2, 10)}`;
  const outcome = el('div', { class: 'outcome', attrs: { 'aria-live': 'assertive' } });
  const confirmButton = el('button', { class: 'primary', attrs: { type: 'submit' } }, spec.confirm);
  const cancelButton = el('button', { attrs: { type: 'button' } }, 'Cancel');
  const form = el('form', { attrs: { method: 'dialog' } }, ...spec.body, outcome, el('div', { class: 'buttons' }, confirmButton, cancelButton));
  const dialog = el('dialog', { attrs: { 'aria-labelledby': titleId } }, el('h2', { id: titleId }, spec.title), form);
  let succeeded = false;
  const close = (): void => {
    dialog.close();
    dialog.remove();
    if (succeeded) spec.done?.();
  };
  cancelButton.addEventListener('click', close);
  dialog.addEventListener('cancel', (event) => {
    event.preventDefault();
    close();
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (succeeded) {
      close();
      return;
    }
    confirmButton.disabled = true;
    replace(outcome, el('p', { class: 'loading' }, 'Working…'));
    spec.run().then((shown) => {
      succeeded = true;
      replace(outcome, el('div', { class: 'success', attrs: { role: 'status' } }, shown));
      confirmButton.textContent = 'Close';
      cancelButton.hidden = true;
      for (const control of form.querySelectorAll('input, select, textarea')) (control as HTMLInputElement).disabled = true;
    }, (error: unknown) => {
      replace(outcome, failureBox(error, spec.title));
    }).finally(() => {
      confirmButton.disabled = false;
      confirmButton.focus();
    });
  });
  document.body.appendChild(dialog);
  dialog.showModal();
}
