// The query index's hold on writes as loadConfig reads it (docs/decisions-query.md, "Keeping pace with the
// write path"): the defaults are the index's own, the file's `index` keys and the FOLIO_INDEX_* variables
// set them, and values outside their bounds (or not whole numbers) are refused by name.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { ConfigError, INDEX_LAG_MS_MAX, INDEX_WRITE_WAIT_MS_MAX, loadConfig } from '../server/config.js';
import { DEFAULT_WRITE_HOLD_LIMITS } from '../index/secondary-index.js';

const load = (env: Record<string, string>, file?: string) => loadConfig(file, { FOLIO_DATA_DIR: '/tmp/x', ...env });

function configFile(t: Test, contents: unknown): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-index-config-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'folio.json');
  fs.writeFileSync(file, JSON.stringify(contents));
  return file;
}

t.test('the defaults are the index\'s own', async (t) => {
  t.same(load({}).index, { lag_ms_max: DEFAULT_WRITE_HOLD_LIMITS.lag_ms_max, write_wait_ms_max: DEFAULT_WRITE_HOLD_LIMITS.wait_ms_max });
});

t.test('the file and the environment set them, the environment last', async (t) => {
  const file = configFile(t, { index: { lag_ms_max: 2_000, write_wait_ms_max: 0 } });
  t.same(load({}, file).index, { lag_ms_max: 2_000, write_wait_ms_max: 0 });
  t.same(load({ FOLIO_INDEX_LAG_MS_MAX: '750', FOLIO_INDEX_WRITE_WAIT_MS_MAX: '10000' }, file).index, { lag_ms_max: 750, write_wait_ms_max: 10_000 });
});

t.test('values out of bounds are refused by name', async (t) => {
  const refusals: Array<[Record<string, string>, RegExp]> = [
    [{ FOLIO_INDEX_LAG_MS_MAX: '99' }, /FOLIO_INDEX_LAG_MS_MAX/],
    [{ FOLIO_INDEX_LAG_MS_MAX: String(INDEX_LAG_MS_MAX + 1) }, /FOLIO_INDEX_LAG_MS_MAX/],
    [{ FOLIO_INDEX_LAG_MS_MAX: '1e3' }, /FOLIO_INDEX_LAG_MS_MAX/],
    [{ FOLIO_INDEX_LAG_MS_MAX: '-5' }, /FOLIO_INDEX_LAG_MS_MAX/],
    [{ FOLIO_INDEX_WRITE_WAIT_MS_MAX: String(INDEX_WRITE_WAIT_MS_MAX + 1) }, /FOLIO_INDEX_WRITE_WAIT_MS_MAX/],
    [{ FOLIO_INDEX_WRITE_WAIT_MS_MAX: '1.5' }, /FOLIO_INDEX_WRITE_WAIT_MS_MAX/],
  ];
  for (const [env, message] of refusals) t.throws(() => load(env), { name: ConfigError.name, message }, JSON.stringify(env));
  for (const index of [{ lag_ms_max: 50 }, { lag_ms_max: 1.5 }, { write_wait_ms_max: -1 }, { write_wait_ms_max: INDEX_WRITE_WAIT_MS_MAX + 1 }]) {
    t.throws(() => load({}, configFile(t, { index })), { name: ConfigError.name, message: /index\./ }, JSON.stringify(index));
  }
});
