// The bench report (bench/results-report) rendered from fixture results in a temp dir: bench/results/report.md holds
// every figure of every result beside its target, with the date and machine of its run; each chart is
// a well-formed SVG drawn by echarts, linked from the report, its numbers printed under it; a chart
// whose data is missing is named instead of drawn (and an old drawing of it removed); a quick report
// goes to its own folder and never replaces the full one.

import { XMLValidator } from 'fast-xml-parser';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { formatNumber, targetText } from '../bench/report.js';
import { writeReport } from '../bench/results-report/write-report.js';
import { engineFixture, httpFixture, indexFixture, legacyPeersFixture, peersFixture, snapshotsFixture, writeFixtures } from './helpers/bench-result-fixtures.js';

const ORDER = ['engine', 'http', 'index', 'snapshots', 'peers'];
const CHARTS = ['throughput-connections.svg', 'latency-percentiles.svg', 'index-lag.svg', 'startup-snapshot-vs-replay.svg'];

function tempDir(t: Test): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-bench-report-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('the full report holds every figure beside its target, with its run and machine', async (t) => {
  const dir = tempDir(t);
  const fixtures = [engineFixture(), httpFixture(), indexFixture(), snapshotsFixture(), peersFixture()];
  writeFixtures(dir, fixtures);
  const written = writeReport({ quick: false, resultsDir: dir, order: ORDER, now: new Date('2026-01-03T00:00:00Z') });
  t.equal(written.reportFile, path.join(dir, 'report.md'));
  const report = fs.readFileSync(written.reportFile, 'utf8');
  t.match(report, /^# Folio bench report/);
  t.match(report, /Written 2026-01-03 00:00 UTC/);
  for (const result of fixtures) {
    t.match(report, `## ${result.bench}`, `a section for ${result.bench}`);
    t.match(report, `started ${result.started_at.slice(0, 10)} ${result.started_at.slice(11, 16)} UTC`, `${result.bench}: date of its run`);
    for (const figure of result.figures) {
      const value = formatNumber(figure.value, figure.digits);
      const row = new RegExp(`\\| ${escape(figure.label)} \\| ${escape(value)} \\| ${escape(figure.unit)} \\| ${escape(targetText(figure))} \\|`);
      t.match(report, row, `${result.bench}: "${figure.label}" = ${value} beside ${targetText(figure) || 'no target'}`);
      if (figure.met !== undefined) t.match(report, `| ${figure.met ? 'met' : 'MISSED'}`);
    }
  }
  t.match(report, 'Fixture CPU 9000, 2 cores, 8.0 GiB memory, load average 0.51 0.42 0.33 at the start and 0.61 0.52 0.43 at the end, Node v24.0.0-fixture');
  t.ok(report.indexOf('## engine') < report.indexOf('## http') && report.indexOf('## snapshots') < report.indexOf('## peers'), 'benches in the given order');
  t.match(report, /## Targets[\s\S]*\| peers \| Folio HTTP \/ peer direct \(batch-1000, 1,000 balances, 8 clients\) \| 3\.55 \| ratio \| >= 5\.00 \| MISSED/);
});

t.test('each chart is a well-formed SVG, linked from the report with its numbers', async (t) => {
  const dir = tempDir(t);
  writeFixtures(dir, [httpFixture(), indexFixture(), snapshotsFixture(), peersFixture()]);
  const written = writeReport({ quick: false, resultsDir: dir, order: ORDER });
  const report = fs.readFileSync(written.reportFile, 'utf8');
  t.same(written.missingCharts, []);
  t.same(written.chartFiles.map((file) => path.basename(file)).sort(), [...CHARTS].sort());
  for (const name of CHARTS) {
    const svg = fs.readFileSync(path.join(dir, 'charts', name), 'utf8');
    t.equal(XMLValidator.validate(svg), true, `${name} parses as XML`);
    t.match(svg, /^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/, `${name} is an SVG document`);
    t.match(report, `](charts/${name})`, `the report links ${name}`);
  }
  const throughput = fs.readFileSync(path.join(dir, 'charts', 'throughput-connections.svg'), 'utf8');
  for (const series of ['Folio over HTTP', 'Postgres peer behind Koa', 'Postgres peer (direct)', 'bare Koa (static answer)']) {
    t.match(throughput, series, `throughput chart has ${series}`);
  }
  t.match(report, '| clients | Folio over HTTP | Postgres peer behind Koa | Postgres peer (direct) | bare Koa (static answer) |');
  t.match(report, '| 256 | 5,000 | 2,000 | 1,500 | 12,500 |', 'the sweep\'s numbers under its chart');
  t.match(report, '| Postgres peer (direct) | 9.5 | 15.3 | 31.5 |', 'latency percentiles under their chart');
  t.match(report, '| Postgres peer behind Koa | 11.0 | 18.0 | 40.0 |');
  t.match(report, '| full replay of the log | 7,777 |');
  t.match(report, '| from a snapshot (median) | 987 |');
  t.match(report, /\| 2 \| \d+\.\d \|/, 'index lag at whole seconds');
});

t.test('a peers result recorded before issue 39 still draws its charts, with the lines it has', async (t) => {
  const dir = tempDir(t);
  writeFixtures(dir, [legacyPeersFixture()]);
  const written = writeReport({ quick: false, resultsDir: dir });
  const report = fs.readFileSync(written.reportFile, 'utf8');
  t.match(report, '| clients | Folio over HTTP | Postgres peer (direct) | bare Koa (static answer) |', 'no column for the peer behind Koa it did not measure');
  t.match(report, '| 4 | 1,200 | 2,800 | 32,000 |');
  t.match(report, '| Folio in-process | 1.5 | 2.5 | 8.0 |');
  t.match(report, '| Postgres peer (direct) | 17.8 | 30.0 | 47.8 |');
});

t.test('a chart without data is named, not drawn, and an old drawing of it goes', async (t) => {
  const dir = tempDir(t);
  writeFixtures(dir, [indexFixture(), peersFixture()]);
  writeReport({ quick: false, resultsDir: dir });
  t.ok(fs.existsSync(path.join(dir, 'charts', 'index-lag.svg')));
  writeFixtures(dir, [indexFixture(false)]);
  const written = writeReport({ quick: false, resultsDir: dir });
  t.notOk(fs.existsSync(path.join(dir, 'charts', 'index-lag.svg')), 'stale chart removed');
  t.equal(written.missingCharts.length, 2, 'index lag and start-up');
  const report = fs.readFileSync(written.reportFile, 'utf8');
  t.match(report, /Not drawn:\n\n- index lag over time/);
  t.match(report, '- start-up from a snapshot against replay: no snapshots result');
});

t.test('a quick report goes beside the full one, from the newest result of either kind', async (t) => {
  const dir = tempDir(t);
  writeFixtures(dir, [peersFixture('2026-01-02T03:04:05.000Z'), peersFixture('2026-02-02T03:04:05.000Z', true)]);
  const full = writeReport({ quick: false, resultsDir: dir });
  const quick = writeReport({ quick: true, resultsDir: dir });
  t.equal(quick.reportFile, path.join(dir, 'quick', 'report.md'));
  t.ok(quick.chartFiles.every((file) => file.startsWith(path.join(dir, 'quick', 'charts'))));
  t.match(fs.readFileSync(full.reportFile, 'utf8'), 'full run, started 2026-01-02 03:04 UTC');
  const quickText = fs.readFileSync(quick.reportFile, 'utf8');
  t.match(quickText, 'quick run (shortened loads: not figures to put on record), started 2026-02-02 03:04 UTC');
  t.notMatch(quickText, 'full run, started');
});

t.test('no results yet: the report says so', async (t) => {
  const dir = tempDir(t);
  const written = writeReport({ quick: false, resultsDir: dir });
  t.match(fs.readFileSync(written.reportFile, 'utf8'), 'No bench results yet.');
  t.same(written.chartFiles, []);
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
