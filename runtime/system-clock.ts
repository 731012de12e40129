// The wall clock as the engine's Clock. The engine itself guards against the clock stepping back.

import type { Clock } from '../engine/ports.js';

export const systemClock: Clock = { now: () => Date.now() };
