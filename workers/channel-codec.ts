// The binary part of the channel between an HTTP worker and the engine's thread (engine-channel.ts).
// Most calls and answers cross as structured clones, but the ones every transfer makes cross as bytes,
// all of one batch in one buffer that is moved, not copied, with the message:
//   - a worker's `core.run` of a transfer or a bulk of them: the command, written where the request was
//     parsed (codec/command-codec.ts);
//   - the engine's answer to a command whose value carries transaction records (a transfer, a refund,
//     an action on a hold): each record in the log's own layout (codec/event-codec.ts), read back in
//     the worker that renders it.
// A structured clone builds its copy property by property through the serializer on both threads; the
// engine's thread is the one every transfer waits for, and these were the largest part of its time in
// the channel.

import { ByteReader, ByteWriter } from '../codec/byte-writer.js';
import { readBulkCommand, readCreateCommand, writeBulkCommand, writeCreateCommand } from '../codec/command-codec.js';
import { readTransaction, writeTransaction } from '../codec/event-codec.js';
import type { Command, CommandOf, CommandOp } from '../engine/commands.js';
import type { ResultOf } from '../engine/operations.js';
import type { TransactionRecord } from '../engine/records.js';
import type { Outcome } from '../engine/result.js';

/** Where a call's command, or an answer's record, lies in its batch's bytes: [start, end). */
export type ByteRange = [start: number, end: number];

/** The commands sent as bytes, each with its code in the batch. */
const ENCODED_COMMANDS = ['transaction.create', 'transaction.bulk'] as const satisfies readonly CommandOp[];
type EncodedOp = (typeof ENCODED_COMMANDS)[number];

type RecordFields<T> = { [Field in keyof T]: T[Field] extends TransactionRecord ? Field : never }[keyof T];

/** The commands whose answers carry transaction records, and in which fields of their value. */
const RECORDS_IN_ANSWERS = {
  'transaction.create': ['transaction'],
  'transaction.refund': ['transaction'],
  'hold.act': ['transaction', 'hold'],
} as const satisfies { [Op in CommandOp]?: readonly RecordFields<ResultOf<Op>>[] };

function encodedOp(op: string): EncodedOp | undefined {
  return (ENCODED_COMMANDS as readonly string[]).includes(op) ? (op as EncodedOp) : undefined;
}

/** The bytes of one batch being written: commands on a worker, records on the engine's thread. */
export class BatchBytes {
  private readonly out = new ByteWriter(16 * 1024);

  /** The command's place in the batch, if it is one sent as bytes. */
  command(command: Command): ByteRange | undefined {
    const op = encodedOp(command.op);
    if (op === undefined) return undefined;
    const start = this.out.length;
    this.out.u8(ENCODED_COMMANDS.indexOf(op));
    if (op === 'transaction.create') writeCreateCommand(this.out, command as CommandOf<'transaction.create'>);
    else writeBulkCommand(this.out, command as CommandOf<'transaction.bulk'>);
    return [start, this.out.length];
  }

  /**
   * An outcome of `command` with its transaction records taken out into the batch: the outcome to send
   * (the records' fields left out of its value) and where each record lies; undefined for an outcome
   * without records, sent whole.
   */
  outcome(command: Command, outcome: Outcome<unknown>): { outcome: Outcome<unknown>; records: Array<[field: string, ...ByteRange]> } | undefined {
    const fields = (RECORDS_IN_ANSWERS as Partial<Record<string, readonly string[]>>)[command.op];
    if (fields === undefined || !outcome.ok) return undefined;
    const value = { ...(outcome.value as Record<string, unknown>) };
    const records: Array<[string, ...ByteRange]> = [];
    for (const field of fields) {
      const record = value[field] as TransactionRecord | undefined;
      if (record === undefined) continue;
      const start = this.out.length;
      writeTransaction(this.out, record);
      records.push([field, start, this.out.length]);
      delete value[field];
    }
    return { outcome: { ok: true, value, seq: outcome.seq }, records };
  }

  /** The batch's bytes, in a buffer of their own to move with the message; undefined when there are none. */
  take(): ArrayBuffer | undefined {
    if (this.out.length === 0) return undefined;
    const copy = new ArrayBuffer(this.out.length);
    new Uint8Array(copy).set(this.out.bytes());
    this.out.reset();
    return copy;
  }
}

/** The command a call sent as bytes. */
export function commandAt(bytes: Buffer, [start]: ByteRange): Command {
  const input = new ByteReader(bytes, start);
  const op = ENCODED_COMMANDS[input.u8()];
  if (op === undefined) throw new Error('unknown command code in a call batch');
  const command = (op === 'transaction.create' ? readCreateCommand(input) : readBulkCommand(input)) as Command;
  (command as { op: CommandOp }).op = op;
  return command;
}

/** An outcome sent with its records as bytes, whole again. */
export function outcomeWith(outcome: Outcome<unknown>, records: ReadonlyArray<[string, ...ByteRange]>, bytes: Buffer): Outcome<unknown> {
  if (!outcome.ok) return outcome;
  const value = outcome.value as Record<string, unknown>;
  for (const [field, start] of records) value[field] = readTransaction(new ByteReader(bytes, start));
  return outcome;
}
