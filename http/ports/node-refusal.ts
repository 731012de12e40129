// Why this node will not carry out a request right now, because of its own state rather than the ledger's
// rules (those are the engine's rejections, engine/rejections.ts): a closed set of codes, each asking the
// caller to retry, here or at another node. The layers below the HTTP edge (the replicated node, the
// cutover, the engine host of the HTTP workers, the log's waits for durability) refuse with a NodeRefusal,
// a value with one of these codes, thrown or rejected with where a promise can only fail; only the edge
// turns it into the error envelope (api-error.ts fromNodeRefusal, middleware/error-envelope.ts).

export const NODE_REFUSAL_MESSAGES = {
  /** The write's record was sealed but never committed by the group: its outcome is unknown. */
  REPL_NOT_LEADER: 'this node lost the lead before the write was committed: its outcome is unknown; retry it with the same reference',
  /** No node leads right now, or this one holds its writes while it does not. */
  REPL_NO_LEADER: 'no leader is known right now: this node does not take writes; retry shortly',
  /** The node is joining or rejoining its group and serves nothing meanwhile. */
  REPL_REJOINING: 'this node is rejoining its replication group; retry shortly',
  /** The ledger is being moved to a new process by its control plane. */
  CUTOVER_FENCED: 'this ledger is being moved to a new process; retry shortly',
} as const;

export type NodeRefusalCode = keyof typeof NODE_REFUSAL_MESSAGES;

/** Seconds a client waits before retrying a refusal of the node. */
export const NODE_REFUSAL_RETRY_AFTER_SECONDS = 1;

export class NodeRefusal extends Error {
  override readonly name = 'NodeRefusal';

  constructor(readonly code: NodeRefusalCode, message: string = NODE_REFUSAL_MESSAGES[code]) {
    super(message);
  }
}

export function isNodeRefusalCode(code: string): code is NodeRefusalCode {
  return Object.hasOwn(NODE_REFUSAL_MESSAGES, code);
}
