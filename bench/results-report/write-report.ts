// Writes the bench report from the result files: bench/results/report.md with its charts in
// bench/results/charts/, from full runs only; a quick run writes bench/results/quick/report.md and
// quick/charts/ instead (not kept in git), so a quick check never replaces the figures on record.
// Files are written to a temporary name and renamed; charts no longer drawn are removed.

import fs from 'node:fs';
import path from 'node:path';
import { RESULTS_DIR } from '../report.js';
import { buildCharts } from './report-charts.js';
import { reportMarkdown } from './report-markdown.js';
import { newestResults } from './stored-results.js';

export interface WrittenReport {
  reportFile: string;
  chartFiles: string[];
  missingCharts: string[];
}

export interface ReportOptions {
  quick: boolean;
  /** Where the result files are (default bench/results). */
  resultsDir?: string;
  /** Benches in the order the report lists them; others follow by name. */
  order?: string[];
  now?: Date;
}

function writeAtomically(file: string, text: string): void {
  const temporary = `${file}.tmp`;
  fs.writeFileSync(temporary, text);
  fs.renameSync(temporary, file);
}

export function writeReport(options: ReportOptions): WrittenReport {
  const resultsDir = options.resultsDir ?? RESULTS_DIR;
  const reportDir = options.quick ? path.join(resultsDir, 'quick') : resultsDir;
  const chartsDir = path.join(reportDir, 'charts');
  const rank = (bench: string): number => {
    const index = options.order?.indexOf(bench) ?? -1;
    return index === -1 ? Number.MAX_SAFE_INTEGER : index;
  };
  const results = newestResults(resultsDir, options.quick).sort((a, b) => rank(a.bench) - rank(b.bench) || (a.bench < b.bench ? -1 : 1));
  const charts = buildCharts(results);

  fs.mkdirSync(chartsDir, { recursive: true });
  const chartFiles = charts.charts.map((chart) => {
    const file = path.join(chartsDir, chart.file);
    writeAtomically(file, chart.svg);
    return file;
  });
  const drawn = new Set(charts.charts.map((chart) => chart.file));
  for (const name of fs.readdirSync(chartsDir)) if (name.endsWith('.svg') && !drawn.has(name)) fs.rmSync(path.join(chartsDir, name));

  const reportFile = path.join(reportDir, 'report.md');
  writeAtomically(reportFile, reportMarkdown({ generatedAt: options.now ?? new Date(), quick: options.quick, results, charts, chartsPath: 'charts' }));
  return { reportFile, chartFiles, missingCharts: charts.missing };
}
