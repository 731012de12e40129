// The commands an HTTP worker sends the engine's thread most often, as bytes (workers/channel-codec.ts): a
// transfer (`transaction.create`) and a bulk of them (`transaction.bulk`). Written where the request is
// parsed, read on the engine's thread with a few field reads each, instead of a structured clone built
// property by property: a bulk of a thousand transfers was a thousand object graphs to deserialize on the
// one thread every transfer waits for.
//
//   create  the fixed fields in a fixed order (strings as u16 length + UTF-8, the description as u32
//           length + UTF-8, amounts as balance-codec.ts writes them, u8 flags, f64 times, metadata as
//           balance-codec.ts packs it), then u8 optional parts present: the overdraft limit (an amount),
//           the effective date (f64), and a msgpack blob of the rest (split shares, preconditions)
//   bulk    u8 flags, u32 count, each a create
//
// Every field of both commands is named in a table below with `satisfies`, so adding a field to either
// is a compile error until this codec knows where it goes: nothing is ever dropped on the way.

import { Packr, Unpackr } from 'msgpackr';
import type { BulkCommand, CreateTransactionCommand } from '../engine/commands.js';
import type { MetaData } from '../engine/records.js';
import { readAmount, readMeta, writeAmount, writeMeta } from './balance-codec.js';
import type { ByteReader, ByteWriter } from './byte-writer.js';

const blobPackr = new Packr({ useRecords: false, useBigIntExtension: true });
const blobUnpackr = new Unpackr({ useRecords: false, useBigIntExtension: true });

/** Where each field of a transfer command goes: the fixed layout, or the blob of the rest. */
const CREATE_FIELDS = {
  source: 'fixed', destination: 'fixed', precise_amount: 'fixed', precision: 'fixed', currency: 'fixed', reference: 'fixed',
  description: 'fixed', meta_data: 'fixed', allow_overdraft: 'fixed', skip_queue: 'fixed', inflight: 'fixed',
  inflight_expiry_date: 'fixed', inflight_commit_date: 'fixed', scheduled_for: 'fixed', atomic: 'fixed',
  overdraft_limit: 'optional', effective_date: 'optional',
  sources: 'blob', destinations: 'blob', preconditions: 'blob', include_balances: 'blob', exchange: 'blob',
} as const satisfies Record<keyof CreateTransactionCommand, 'fixed' | 'optional' | 'blob'>;
const BLOB_CREATE_FIELDS = (Object.keys(CREATE_FIELDS) as Array<keyof CreateTransactionCommand>).filter((field) => CREATE_FIELDS[field] === 'blob');

/** The bulk command's fields: the items, and flags. */
const BULK_FIELDS = {
  transactions: 'items', atomic: 'flag', inflight: 'flag', skip_queue: 'flag', run_async: 'flag', include_balances: 'flag',
} as const satisfies Record<keyof BulkCommand, 'items' | 'flag'>;

const FLAG_ALLOW_OVERDRAFT = 1;
const FLAG_SKIP_QUEUE = 2;
const FLAG_INFLIGHT = 4;
const FLAG_ATOMIC = 8;

const BULK_ATOMIC = 1;
const BULK_INFLIGHT = 2;
const BULK_SKIP_QUEUE = 4;
const BULK_RUN_ASYNC = 8;
/** run_async present but false (absent and false are told apart, as a structured clone would). */
const BULK_RUN_ASYNC_FALSE = 16;
const BULK_INCLUDE_BALANCES = 32;

const OPTIONAL_BLOB = 1;
const OPTIONAL_OVERDRAFT_LIMIT = 2;
const OPTIONAL_EFFECTIVE_DATE = 4;

export function writeCreateCommand(out: ByteWriter, command: CreateTransactionCommand): void {
  out.shortString(command.source);
  out.shortString(command.destination);
  writeAmount(out, command.precise_amount);
  writeAmount(out, command.precision);
  out.shortString(command.currency);
  out.shortString(command.reference);
  out.longString(command.description);
  writeMeta(out, command.meta_data);
  out.u8((command.allow_overdraft ? FLAG_ALLOW_OVERDRAFT : 0) | (command.skip_queue ? FLAG_SKIP_QUEUE : 0)
    | (command.inflight ? FLAG_INFLIGHT : 0) | (command.atomic ? FLAG_ATOMIC : 0));
  out.f64(command.inflight_expiry_date);
  out.f64(command.inflight_commit_date);
  out.f64(command.scheduled_for);
  let blob: Record<string, unknown> | undefined;
  for (const field of BLOB_CREATE_FIELDS) {
    if (command[field] !== undefined) (blob ??= {})[field] = command[field];
  }
  out.u8((blob ? OPTIONAL_BLOB : 0) | (command.overdraft_limit !== undefined ? OPTIONAL_OVERDRAFT_LIMIT : 0)
    | (command.effective_date !== undefined ? OPTIONAL_EFFECTIVE_DATE : 0));
  if (command.overdraft_limit !== undefined) writeAmount(out, command.overdraft_limit);
  if (command.effective_date !== undefined) out.f64(command.effective_date);
  if (blob) {
    const packed = blobPackr.pack(blob);
    out.u32(packed.length);
    out.raw(packed);
  }
}

export function readCreateCommand(input: ByteReader): CreateTransactionCommand {
  const source = input.shortString();
  const destination = input.shortString();
  const preciseAmount = readAmount(input);
  const precision = readAmount(input);
  const currency = input.shortString();
  const reference = input.shortString();
  const description = input.longString();
  const meta = readMeta(input);
  const flags = input.u8();
  const command: CreateTransactionCommand = {
    source,
    destination,
    precise_amount: preciseAmount,
    precision,
    currency,
    reference,
    description,
    // A command's metadata is its own object (the shared empty one is frozen).
    meta_data: Object.isFrozen(meta) ? ({} as MetaData) : meta,
    allow_overdraft: (flags & FLAG_ALLOW_OVERDRAFT) !== 0,
    skip_queue: (flags & FLAG_SKIP_QUEUE) !== 0,
    inflight: (flags & FLAG_INFLIGHT) !== 0,
    inflight_expiry_date: input.f64(),
    inflight_commit_date: input.f64(),
    scheduled_for: input.f64(),
    atomic: (flags & FLAG_ATOMIC) !== 0,
  };
  const optional = input.u8();
  if (optional & OPTIONAL_OVERDRAFT_LIMIT) command.overdraft_limit = readAmount(input);
  if (optional & OPTIONAL_EFFECTIVE_DATE) command.effective_date = input.f64();
  if (optional & OPTIONAL_BLOB) {
    const length = input.u32();
    Object.assign(command, blobUnpackr.unpack(input.bytes(length)) as Partial<CreateTransactionCommand>);
  }
  return command;
}

export function writeBulkCommand(out: ByteWriter, command: BulkCommand): void {
  let flags = (command.atomic ? BULK_ATOMIC : 0) | (command.inflight ? BULK_INFLIGHT : 0) | (command.skip_queue ? BULK_SKIP_QUEUE : 0);
  if (command.run_async === true) flags |= BULK_RUN_ASYNC;
  else if (command.run_async === false) flags |= BULK_RUN_ASYNC_FALSE;
  if (command.include_balances === true) flags |= BULK_INCLUDE_BALANCES;
  out.u8(flags);
  out.u32(command.transactions.length);
  for (const item of command.transactions) writeCreateCommand(out, item);
}

export function readBulkCommand(input: ByteReader): BulkCommand {
  const flags = input.u8();
  const count = input.u32();
  const transactions = new Array<CreateTransactionCommand>(count);
  for (let index = 0; index < count; index += 1) transactions[index] = readCreateCommand(input);
  const command: BulkCommand = {
    transactions,
    atomic: (flags & BULK_ATOMIC) !== 0,
    inflight: (flags & BULK_INFLIGHT) !== 0,
    skip_queue: (flags & BULK_SKIP_QUEUE) !== 0,
  };
  if (flags & BULK_RUN_ASYNC) command.run_async = true;
  else if (flags & BULK_RUN_ASYNC_FALSE) command.run_async = false;
  if (flags & BULK_INCLUDE_BALANCES) command.include_balances = true;
  return command;
}
