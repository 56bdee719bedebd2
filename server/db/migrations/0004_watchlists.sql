-- Per-account address watchlists for the whale-intelligence tools (watch_address, list_watches,
-- unwatch_address, get_watch_activity). A watch remembers the block it was last checked at, so
-- get_watch_activity answers "what happened since the last check" and then moves the mark.
CREATE TABLE watches (
  id                  bigserial PRIMARY KEY,
  account_id          uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  chain               text NOT NULL CHECK (chain IN ('ethereum', 'base', 'polygon', 'bsc', 'solana')),
  address             text NOT NULL,  -- EVM: lower-case hex; Solana: base58 as given
  note                text CHECK (char_length(note) <= 200),
  created_at          timestamptz NOT NULL DEFAULT now(),
  last_checked_at     timestamptz,
  last_checked_block  bigint,         -- EVM: the last block get_watch_activity covered
  UNIQUE (account_id, chain, address)
);
CREATE INDEX watches_account ON watches (account_id, created_at);
