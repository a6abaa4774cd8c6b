-- A status and a row's total tokens stored as their difference from what they nearly always are
-- (issue 54; request-rows.ts, `storedStatus`, `storedTotalTokens`): the status less 200, the total
-- less the prompt, generated and cache-read tokens. SQLite stores an integer 0 as its type alone,
-- no byte in the row, where a status of 200 took two and a total one or two: at ten million demo
-- rows, 97 % of the statuses and 96 % of the totals, ~4 bytes a row. The views add them back, so
-- every read is unchanged; they are made again by this migration's step (store.ts).
--
-- Every existing row is rewritten in place, in the upgrade's worker.

DROP VIEW IF EXISTS requests;
DROP VIEW IF EXISTS requests_unindexed;

UPDATE request_rows SET
  status = status - 200,
  total_tokens = total_tokens - (COALESCE(prompt_tokens, 0) + tokens_generated + COALESCE(cache_read_input_tokens, 0));
