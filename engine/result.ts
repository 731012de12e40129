// The one shape of a result across the engine: `ok` and the value, or not `ok` and the rejection (a code
// from the closed set in rejections.ts). Decisions return it, and the engine's answers add the log seq
// to wait for.

import type { Rejection } from './rejections.js';

export type Decided<T> = { ok: true; value: T } | { ok: false; rejection: Rejection };

/** A decided command as the engine answers it: the value and the log position to wait for before acknowledging. */
export type Outcome<T> = { ok: true; value: T; seq: number } | { ok: false; rejection: Rejection };

export function accept<T>(value: T): { ok: true; value: T } {
  return { ok: true, value };
}

export function refuse(rejection: Rejection): { ok: false; rejection: Rejection } {
  return { ok: false, rejection };
}
