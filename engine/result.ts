// The one shape of a result across layers: `ok` and the value, or not `ok` and why, always an object
// with a stable `code` and a `message` (the engine's rejections carry a code from the closed set in
// rejections.ts; other layers name their own small sets). Nothing below the HTTP edge throws for a
// refusal: the edge turns a refusal into the error envelope.

import type { Rejection } from './rejections.js';

/** Why something was refused: a stable code and words for a person. */
export interface Failure {
  code: string;
  message: string;
}

export type Result<T, F extends Failure = Rejection> = { ok: true; value: T } | { ok: false; rejection: F };

/** A decision of the engine. */
export type Decided<T> = Result<T>;

/** A decided command as the engine answers it: the value and the log position to wait for before acknowledging. */
export type Outcome<T> = { ok: true; value: T; seq: number } | { ok: false; rejection: Rejection };

export function accept<T>(value: T): { ok: true; value: T } {
  return { ok: true, value };
}

export function refuse<F extends Failure>(rejection: F): { ok: false; rejection: F } {
  return { ok: false, rejection };
}
