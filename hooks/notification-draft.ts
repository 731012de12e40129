// The shape every notification deriver answers in (notifications.ts gathers the derivers; each kind of
// notification has a file of its own that imports only this, so no deriver imports the list it is in).

import type { LedgerEvent } from '../engine/events.js';

/** One notification an event calls for: its event name and the `data` of the body. */
export interface NotificationDraft {
  name: string;
  /** Anything toJsonText writes (RawJson included): sent as the body's `data`. */
  data: unknown;
}

/** The notifications one kind of event calls for (most events call for none). Must be pure. */
export type NotificationDeriver = (event: LedgerEvent) => NotificationDraft[];
