// The V8 settings every Folio process runs with: `npm start`, the `folio` command (its first line) and
// the servers and children the benches start. package.json and bin/folio.ts cannot import this list,
// so they repeat it; test/node-flags.unit.test.ts fails when the copies disagree.
//
// Why a larger young generation: start-up replays and bulk loads create records that live for the
// whole run at a high rate. With V8's default semi-space (16 MiB here) the scavenger runs four times as
// often and copies each survivor through the young generation before promoting it. With 64 MiB a full
// replay of 1,000,000 new-balance transfers took 8.1 s instead of 12.4 s, RSS after it was no higher
// (1,144 vs 1,297 MiB), and HTTP transfers were unchanged (within noise). 128 MiB was no faster.
export const NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64'];
