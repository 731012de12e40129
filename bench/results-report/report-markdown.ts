// The text of bench/results/report.md: the targets in one table first, then each bench's figures
// beside their targets under the date and machine of the run they came from (results of different
// benches may come from different runs), then the charts with their numbers.

import { formatNumber, targetText } from '../report.js';
import type { ChartSet, ChartTable } from './report-charts.js';
import type { StoredMachine, StoredResult } from './stored-results.js';

const GIB = 1024 ** 3;

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function table(header: string[], rows: string[][], rightAligned: number[] = []): string {
  const align = header.map((_, column) => (rightAligned.includes(column) ? '---:' : '---'));
  return [header, align, ...rows].map((row) => `| ${row.map(cell).join(' | ')} |`).join('\n');
}

export function runDate(result: StoredResult): string {
  return result.started_at.replace('T', ' ').replace(/:\d\d(\.\d+)?Z$/, ' UTC');
}

function runKind(result: StoredResult): string {
  return result.settings.quick ? 'quick run (shortened loads: not figures to put on record)' : 'full run';
}

export function machineText(machine: StoredMachine): string {
  const load = (values: number[]): string => values.map((value) => value.toFixed(2)).join(' ');
  return `${machine.cpu_model}, ${machine.cpus} cores, ${(machine.memory_bytes / GIB).toFixed(1)} GiB memory, ` +
    `load average ${load(machine.load_average_at_start)} at the start and ${load(machine.load_average_at_end)} at the end, ` +
    `Node ${machine.node}, ${machine.platform}`;
}

function status(figure: StoredResult['figures'][number]): string {
  if (figure.met === undefined) return '';
  return figure.met ? 'met' : 'MISSED';
}

function figureRow(figure: StoredResult['figures'][number]): string[] {
  return [figure.label, formatNumber(figure.value, figure.digits), figure.unit, targetText(figure), [status(figure), figure.note ?? ''].filter(Boolean).join(': ')];
}

function targetsSection(results: StoredResult[]): string {
  const rows = results.flatMap((result) => result.figures
    .filter((figure) => figure.target !== undefined)
    .map((figure) => [result.bench, ...figureRow(figure), runDate(result)]));
  if (rows.length === 0) return '';
  return `## Targets\n\n${table(['bench', 'figure', 'value', 'unit', 'target', 'status', 'run'], rows, [2])}\n`;
}

function benchSection(result: StoredResult): string {
  return [
    `## ${result.bench}`,
    '',
    `${runKind(result)}, started ${runDate(result)}, on ${machineText(result.machine)}.`,
    '',
    table(['figure', 'value', 'unit', 'target', 'status'], result.figures.map(figureRow), [1]),
    '',
  ].join('\n');
}

function chartTable(data: ChartTable): string {
  return table(data.header, data.rows, data.header.map((_, column) => column).slice(1));
}

function chartsSection(set: ChartSet, chartsPath: string): string {
  const parts = ['## Charts', ''];
  for (const chart of set.charts) {
    parts.push(
      `### ${chart.title}`, '',
      `![${chart.title}](${chartsPath}/${chart.file})`, '',
      `From the ${chart.from.bench} bench, ${runKind(chart.from)} of ${runDate(chart.from)}.`, '',
      chartTable(chart.table), '',
    );
  }
  if (set.missing.length > 0) parts.push('Not drawn:', '', ...set.missing.map((reason) => `- ${reason}`), '');
  return parts.join('\n');
}

export interface ReportText {
  generatedAt: Date;
  quick: boolean;
  results: StoredResult[];
  charts: ChartSet;
  /** Path of the charts folder relative to the report. */
  chartsPath: string;
}

export function reportMarkdown(report: ReportText): string {
  const source = report.quick
    ? 'the newest result of each bench, quick or full (`FOLIO_BENCH_QUICK=1 npm run bench`)'
    : 'the newest full result of each bench (`npm run bench`)';
  const intro = [
    '# Folio bench report',
    '',
    `Written ${report.generatedAt.toISOString().replace('T', ' ').replace(/:\d\d\.\d+Z$/, ' UTC')} from ${source} in bench/results; ` +
      'every run of `npm run bench`, of all benches or some, writes it again. Each bench below says when it ran and on what ' +
      'machine: figures of different benches may come from different runs. The load generator shares the machine with the ' +
      'server; docs/performance.md says where the time goes.',
    '',
  ];
  if (report.results.length === 0) return [...intro, 'No bench results yet.', ''].join('\n');
  return [...intro, targetsSection(report.results), ...report.results.map(benchSection), chartsSection(report.charts, report.chartsPath)].join('\n');
}
