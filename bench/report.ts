// What a bench hands back (figures, each with its target when the issue sets one, plus free-form
// details), the table printed at the end of a run, and the JSON written to bench/results/<name>.json.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchSettings } from './settings.js';

export interface Target {
  op: '>=' | '<=';
  value: number;
}

export interface Figure {
  label: string;
  value: number;
  unit: string;
  /** Decimal places shown in the table. */
  digits?: number;
  target?: Target;
  /** Said beside the figure, e.g. why a target is judged on a projection. */
  note?: string;
}

export interface BenchResult {
  name: string;
  figures: Figure[];
  details: Record<string, unknown>;
}

export const RESULTS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bench/results');

export function targetMet(figure: Figure): boolean | undefined {
  const { target } = figure;
  if (!target) return undefined;
  return target.op === '>=' ? figure.value >= target.value : figure.value <= target.value;
}

export function formatNumber(value: number, digits = 0): string {
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function targetText(figure: Figure): string {
  if (!figure.target) return '';
  return `${figure.target.op} ${formatNumber(figure.target.value, figure.digits)}`;
}

export function formatTable(results: BenchResult[]): string {
  const rows: string[][] = [['bench', 'figure', 'value', 'unit', 'target', 'status']];
  for (const result of results) {
    for (const figure of result.figures) {
      const met = targetMet(figure);
      const status = met === undefined ? '' : met ? 'met' : 'MISSED';
      rows.push([
        result.name,
        figure.label,
        formatNumber(figure.value, figure.digits),
        figure.unit,
        targetText(figure),
        figure.note ? `${status} (${figure.note})`.trim() : status,
      ]);
    }
  }
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  const line = (row: string[]): string =>
    row.map((cell, column) => (column === 2 ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!))).join('  ').trimEnd();
  const rule = widths.map((width) => '-'.repeat(width)).join('  ');
  return [line(rows[0]!), rule, ...rows.slice(1).map(line)].join('\n');
}

/**
 * Writes the result with the conditions it was measured under (including the host's load averages at
 * start and end: other work on this shared VM moves every figure); quick runs go beside the full ones.
 */
export function writeResult(result: BenchResult, settings: BenchSettings, startedAt: Date, loadAtStart: number[]): string {
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, `${result.name}${settings.quick ? '.quick' : ''}.json`);
  const body = {
    bench: result.name,
    started_at: startedAt.toISOString(),
    machine: {
      cpus: os.cpus().length,
      cpu_model: os.cpus()[0]?.model ?? 'unknown',
      memory_bytes: os.totalmem(),
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
      load_average_at_start: loadAtStart.map((value) => Number(value.toFixed(2))),
      load_average_at_end: os.loadavg().map((value) => Number(value.toFixed(2))),
    },
    settings,
    figures: result.figures.map((figure) => ({ ...figure, met: targetMet(figure) })),
    details: result.details,
  };
  const temporary = `${file}.tmp`;
  fs.writeFileSync(temporary, JSON.stringify(body, null, 2) + '\n');
  fs.renameSync(temporary, file);
  return file;
}
