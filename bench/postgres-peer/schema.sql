-- The Postgres peer's ledger: the transfer semantics of Folio written for PostgreSQL, so the peers bench
-- compares Folio with what a team would otherwise run. Balances are rows; a transfer locks its balances
-- in balance_id order (every transfer and batch takes its locks in that one order, so two of them can
-- wait on each other but never deadlock), checks the source's funds unless an overdraft is allowed,
-- records the transaction under a unique reference and moves the amount, all in one database
-- transaction. Amounts are numeric: exact integers in the smallest unit, as Folio's bigints are.
--
-- A refusal raises SQLSTATE FL001 with the refusal code (Folio's rejection codes) as the message and
-- the index of the refused item in a batch as the detail, so the whole transfer or batch rolls back and
-- the caller learns why. ledger_transfer is a batch of one, written out for one round trip per transfer.

CREATE TABLE balances (
  balance_id text PRIMARY KEY,
  currency text NOT NULL,
  -- credit_balance - debit_balance, kept beside them so the funds check reads one column.
  balance numeric NOT NULL DEFAULT 0,
  credit_balance numeric NOT NULL DEFAULT 0 CHECK (credit_balance >= 0),
  debit_balance numeric NOT NULL DEFAULT 0 CHECK (debit_balance >= 0),
  version bigint NOT NULL DEFAULT 0
);

CREATE TABLE transactions (
  transaction_id uuid PRIMARY KEY,
  reference text NOT NULL UNIQUE,
  source text NOT NULL REFERENCES balances,
  destination text NOT NULL REFERENCES balances,
  -- Folio's limit: at most 40 decimal digits, whole, above zero.
  precise_amount numeric(40, 0) NOT NULL CHECK (precise_amount > 0),
  currency text NOT NULL,
  allow_overdraft boolean NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE FUNCTION ledger_refuse(code text, item integer) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION USING ERRCODE = 'FL001', MESSAGE = code, DETAIL = item::text;
END $$;

CREATE FUNCTION ledger_create_balances(ids text[], balance_currency text) RETURNS void
LANGUAGE sql AS $$
  INSERT INTO balances (balance_id, currency) SELECT unnest(ids), balance_currency;
$$;

-- One transfer between balances this transaction already holds locked: checks, records, moves.
-- An empty reference asks for one made from the transaction id, as Folio does.
CREATE FUNCTION ledger_apply(
  item integer, transfer_reference text, source_id text, destination_id text, amount numeric,
  transfer_currency text, overdraft boolean
) RETURNS uuid
LANGUAGE plpgsql AS $$
DECLARE
  source_row balances%ROWTYPE;
  destination_currency text;
  new_id uuid := uuidv7();
BEGIN
  IF amount IS NULL OR amount <= 0 OR amount <> trunc(amount) OR amount >= 1e40 THEN
    PERFORM ledger_refuse('TXN_INVALID_AMOUNT', item);
  END IF;
  IF source_id = destination_id THEN
    PERFORM ledger_refuse('TXN_SAME_SOURCE_DESTINATION', item);
  END IF;
  SELECT * INTO source_row FROM balances WHERE balance_id = source_id;
  SELECT currency INTO destination_currency FROM balances WHERE balance_id = destination_id;
  IF source_row.balance_id IS NULL OR destination_currency IS NULL THEN
    PERFORM ledger_refuse('BAL_NOT_FOUND', item);
  END IF;
  IF source_row.currency <> transfer_currency OR destination_currency <> transfer_currency THEN
    PERFORM ledger_refuse('TXN_CURRENCY_MISMATCH', item);
  END IF;
  IF NOT overdraft AND source_row.balance < amount THEN
    PERFORM ledger_refuse('TXN_INSUFFICIENT_FUNDS', item);
  END IF;
  INSERT INTO transactions (transaction_id, reference, source, destination, precise_amount, currency, allow_overdraft)
  VALUES (new_id, coalesce(nullif(transfer_reference, ''), 'ref_' || new_id), source_id, destination_id, amount,
          transfer_currency, overdraft)
  ON CONFLICT (reference) DO NOTHING;
  IF NOT FOUND THEN
    PERFORM ledger_refuse('TXN_DUPLICATE_REFERENCE', item);
  END IF;
  UPDATE balances SET balance = balance - amount, debit_balance = debit_balance + amount, version = version + 1
  WHERE balance_id = source_id;
  UPDATE balances SET balance = balance + amount, credit_balance = credit_balance + amount, version = version + 1
  WHERE balance_id = destination_id;
  RETURN new_id;
END $$;

-- Locks the balances in balance_id order, whatever order the caller named them in: the ORDER BY is
-- applied before the rows are locked (the lock sits above the sort in the plan).
CREATE FUNCTION ledger_lock(ids text[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM balances WHERE balance_id = ANY (ids) ORDER BY balance_id FOR UPDATE;
END $$;

CREATE FUNCTION ledger_transfer(
  transfer_reference text, source_id text, destination_id text, amount numeric, transfer_currency text,
  overdraft boolean
) RETURNS uuid
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM ledger_lock(ARRAY[source_id, destination_id]);
  RETURN ledger_apply(0, transfer_reference, source_id, destination_id, amount, transfer_currency, overdraft);
END $$;

-- A batch is all or nothing, as Folio's atomic bulk is one log record: every balance it touches is
-- locked first, then the items are applied in order, each seeing the balances the earlier ones left.
CREATE FUNCTION ledger_transfer_batch(
  references_ text[], source_ids text[], destination_ids text[], amounts numeric[], transfer_currency text,
  overdrafts boolean[]
) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  items integer := coalesce(array_length(source_ids, 1), 0);
BEGIN
  IF items = 0 OR array_length(references_, 1) <> items OR array_length(destination_ids, 1) <> items
     OR array_length(amounts, 1) <> items OR array_length(overdrafts, 1) <> items THEN
    PERFORM ledger_refuse('TXN_INVALID_BATCH', 0);
  END IF;
  PERFORM ledger_lock(source_ids || destination_ids);
  FOR item IN 1 .. items LOOP
    PERFORM ledger_apply(item - 1, references_[item], source_ids[item], destination_ids[item], amounts[item],
                         transfer_currency, overdrafts[item]);
  END LOOP;
  RETURN items;
END $$;
