// Invariant checks that stay on in production. A failed assertion is a bug in Folio, never bad input:
// bad input is answered with a rejection long before any of these run.

export class InvariantViolation extends Error {
  override readonly name = 'InvariantViolation';
}

export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new InvariantViolation(message);
}

/**
 * The same check written `if (!condition) fail(...)`: for paths run once per event, where building the
 * message on every call (a template string, a JSON.stringify) would cost more than the check itself.
 */
export function fail(message: string): never {
  throw new InvariantViolation(message);
}
