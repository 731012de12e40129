// Charts, drawn by echarts (the build the package ships, served at /console/echarts.js: line, bar and pie
// on a canvas). A chart only draws: the figures a person reads are exact and come from the API's digits
// (the plotted positions are doubles, which is all a position needs). The balance history chart shows
// the balance after each change as a step line; under the pointer, or moved along with the arrow keys,
// it says the balance as of that moment, taken from the same changes (exactly what GET /balances/:id/at
// answers for that moment), in a live region screen readers hear. The lineage chart is a pie of each
// provider's available funds, beside a table of the exact figures.

import { el } from './dom.js';
import { amountDigits, formatAmount, localTime, utcTitle } from './format.js';
import type { BalanceChange } from './records.js';

interface ZrEvent {
  offsetX: number;
  offsetY: number;
}

interface EChartsInstance {
  setOption(option: object, notMerge?: boolean): void;
  resize(): void;
  dispose(): void;
  getZr(): { on(event: string, handler: (event: ZrEvent) => void): void };
  convertFromPixel(finder: object, point: number[]): number[];
  convertToPixel(finder: object, point: number[]): number[];
  containPixel(finder: object, point: number[]): boolean;
}

interface EChartsGlobal {
  init(dom: HTMLElement, theme?: string | null, options?: { renderer?: 'canvas' | 'svg' }): EChartsInstance;
}

function library(): EChartsGlobal | undefined {
  return (window as unknown as { echarts?: EChartsGlobal }).echarts;
}

/** A chart on the page; `dispose` when the page goes. */
export interface ShownChart {
  element: HTMLElement;
  dispose(): void;
}

function mount(container: HTMLElement, option: object): { chart: EChartsInstance; dispose(): void } | undefined {
  const charts = library();
  if (!charts) return undefined;
  const chart = charts.init(container, null, { renderer: 'canvas' });
  chart.setOption(option);
  const resized = new ResizeObserver(() => chart.resize());
  resized.observe(container);
  return { chart, dispose: () => { resized.disconnect(); chart.dispose(); } };
}

function tickText(value: number, precision: string | undefined): string {
  return formatAmount(amountDigits(String(BigInt(Math.round(value)))), precision);
}

/** One point of the history: when, and the exact balance from then on. */
interface Step {
  atMs: number;
  at: string;
  digits: string;
}

/** The balance as of `atMs`: the last change at or before it (none: the balance had not moved yet). */
export function balanceAsOf(steps: readonly Step[], atMs: number): Step | undefined {
  let low = 0;
  let high = steps.length - 1;
  let found: Step | undefined;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const step = steps[middle] as Step;
    if (step.atMs <= atMs) {
      found = step;
      low = middle + 1;
    } else high = middle - 1;
  }
  return found;
}

/**
 * The balance over time. `changes` oldest first (GET /balances/:id/history); the readout says the
 * balance as of the moment under the pointer.
 */
export function historyChart(changes: readonly BalanceChange[], precision: string | undefined, currency: string): ShownChart {
  const steps: Step[] = changes.map((change) => ({ atMs: Date.parse(change.at), at: change.at, digits: amountDigits(change.balance) }));
  const readout = el('p', { class: 'readout', attrs: { 'aria-live': 'polite', id: 'as-of-readout' } }, 'Point at the chart (or focus it and use the arrow keys) to read the balance as of a moment.');
  const marker = el('div', { class: 'chart-marker', attrs: { 'aria-hidden': 'true' } });
  const canvasBox = el('div', {
    class: 'chart', attrs: {
      tabindex: '0', role: 'img',
      'aria-label': `Balance over time in ${currency}: ${steps.length} changes${steps.length > 0 ? `, from ${localTime(steps[0]!.at)} to ${localTime(steps[steps.length - 1]!.at)}` : ''}. Use the left and right arrow keys to step through them.`,
      'aria-describedby': 'as-of-readout',
    },
  });
  const wrapper = el('div', { class: 'chart-wrapper' }, canvasBox, marker);
  const element = el('figure', { class: 'history' }, wrapper, el('figcaption', null, readout));
  const nowMs = Date.now();
  const last = steps[steps.length - 1];
  const points = steps.map((step) => [step.atMs, Number(step.digits)]);
  if (last && last.atMs < nowMs) points.push([nowMs, Number(last.digits)]);
  const mounted = mount(canvasBox, {
    animation: false,
    aria: { enabled: true },
    grid: { left: 16, right: 24, top: 16, bottom: 28, containLabel: true },
    xAxis: { type: 'time' },
    yAxis: { type: 'value', scale: true, axisLabel: { formatter: (value: number) => tickText(value, precision) } },
    series: [{ type: 'line', step: 'end', showSymbol: steps.length <= 60, symbolSize: 5, data: points, name: 'balance' }],
  });
  if (!mounted) {
    readout.textContent = 'The chart library did not load; the figures are in the tables on this page.';
    return { element, dispose: () => undefined };
  }
  const { chart } = mounted;
  const show = (atMs: number, x: number | undefined): void => {
    const step = balanceAsOf(steps, atMs);
    const moment = new Date(Math.round(atMs)).toISOString();
    readout.setAttribute('data-at', moment);
    readout.textContent = '';
    readout.append(`As of ${localTime(moment)}: `);
    if (step) {
      const figure = el('strong', { class: 'amount', attrs: { 'data-exact': step.digits, 'data-precision': precision ?? '', title: utcTitle(step.at) } }, formatAmount(step.digits, precision));
      readout.append(figure, ` ${currency}`);
    } else readout.append('no balance yet');
    readout.title = utcTitle(moment);
    if (x === undefined) marker.classList.remove('shown');
    else {
      marker.style.transform = `translateX(${Math.round(x)}px)`;
      marker.classList.add('shown');
    }
  };
  chart.getZr().on('mousemove', (event) => {
    const point = [event.offsetX, event.offsetY];
    if (!chart.containPixel({ gridIndex: 0 }, point)) return;
    const [atMs] = chart.convertFromPixel({ gridIndex: 0 }, point);
    if (atMs !== undefined && Number.isFinite(atMs)) show(atMs, event.offsetX);
  });
  let focused = steps.length - 1;
  canvasBox.addEventListener('keydown', (event) => {
    if (steps.length === 0 || (event.key !== 'ArrowLeft' && event.key !== 'ArrowRight' && event.key !== 'Home' && event.key !== 'End')) return;
    event.preventDefault();
    if (event.key === 'ArrowLeft') focused = Math.max(0, focused - 1);
    else if (event.key === 'ArrowRight') focused = Math.min(steps.length - 1, focused + 1);
    else focused = event.key === 'Home' ? 0 : steps.length - 1;
    const step = steps[focused] as Step;
    const [x] = chart.convertToPixel({ gridIndex: 0 }, [step.atMs, Number(step.digits)]);
    show(step.atMs, x);
  });
  return { element, dispose: mounted.dispose };
}

/** A pie of named exact amounts (the lineage by provider); the exact figures are in the table beside it. */
export function pieChart(label: string, slices: Array<{ name: string; digits: string }>, precision: string | undefined): ShownChart {
  const box = el('div', { class: 'chart pie', attrs: { role: 'img', 'aria-label': label } });
  const element = el('figure', { class: 'pie-figure' }, box);
  const mounted = mount(box, {
    animation: false,
    aria: { enabled: true },
    series: [{
      type: 'pie', radius: ['35%', '70%'],
      label: { formatter: (item: { name: string; dataIndex: number }) => `${item.name}\n${formatAmount(slices[item.dataIndex]?.digits ?? '0', precision)}` },
      data: slices.map((slice) => ({ name: slice.name, value: Number(slice.digits) })),
    }],
  });
  return { element, dispose: mounted?.dispose ?? (() => undefined) };
}
