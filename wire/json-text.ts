// JSON out, on the wire: the engine's exact writer in its wire form (engine/exact-json.ts), re-exported
// where the edges look for it.

export { jsonString, RawJson, toJsonText } from '../engine/exact-json.js';
