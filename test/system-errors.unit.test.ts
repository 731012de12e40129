// The system errors the notification webhook announces (runtime/system-errors.ts): gathered and logged in
// one event, at most SYSTEM_ERRORS_PER_MINUTE_MAX a minute, the ones left out counted in the next event,
// nothing at all while the ledger is not doing its own work (a follower, a fenced leader).

import t from 'tap';
import { SYSTEM_ERRORS_PER_MINUTE_MAX, SystemErrorReporter } from '../runtime/system-errors.js';
import { systemErrorNotifications } from '../hooks/system-notifications.js';
import { engineRig } from './helpers/engine-rig.js';

t.test('system errors are logged in batches, bounded, and only by a working ledger', async (t) => {
  const rig = engineRig();
  let working = true;
  const reporter = new SystemErrorReporter({
    record: (messages) => rig.engine.run({ op: 'system.record_errors', messages }).seq,
    working: () => working,
    now: () => rig.clock.ms,
  });
  const logged = () => [...rig.log.read(1)].filter(({ event }) => event.type === 'system.error').map(({ event }) => event.system_errors?.map((error) => error.message));
  reporter.report('first');
  reporter.report('second');
  reporter.flush();
  t.same(logged(), [['first', 'second']], 'one event for what was gathered');
  for (let index = 0; index < SYSTEM_ERRORS_PER_MINUTE_MAX + 5; index += 1) reporter.report(`burst ${index}`);
  reporter.flush();
  const burst = logged()[1] ?? [];
  t.equal(burst.length, SYSTEM_ERRORS_PER_MINUTE_MAX - 2 + 1, 'at most the minute\'s share, and a count of the rest');
  t.match(burst.at(-1), /^7 more system errors were not announced \(at most 10 a minute\)/);
  reporter.report('over the bound');
  reporter.flush();
  t.equal(logged().length, 2, 'nothing more this minute');
  rig.clock.ms += 61_000;
  reporter.flush();
  t.same(logged()[2], ['1 more system errors were not announced (at most 10 a minute); the server\'s log has them'], 'the one left out is counted once the minute has room');
  working = false;
  reporter.report('while fenced');
  reporter.flush();
  t.equal(logged().length, 3, 'a ledger not doing its own work logs none');
  working = true;
  reporter.report('x'.repeat(5_000));
  reporter.flush();
  t.equal(logged()[3]?.[0]?.length, 1_003, 'a message is cut to a bounded length');
  const [last] = [...rig.log.read(1)].filter(({ event }) => event.type === 'system.error').slice(-1);
  t.match(systemErrorNotifications(last!.event), [{ name: 'system.error', data: { error: /^x+\.\.\.$/, time: String } }], "Blnk's payload {error, time}");
  t.same(rig.engine.state.balances.size, engineRig().engine.state.balances.size, 'the state does not change');
});
