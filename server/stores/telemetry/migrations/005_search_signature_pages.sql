-- The search signatures (003) keyed by page first, 16 buckets (512 bytes) to a row.
--
-- A search reads one bucket's slice in every signed epoch. Keyed (epoch, page), that was a
-- seek per epoch for each piece of the text, each into a 2 KiB row that spilled onto an
-- overflow page: ~7 ms per piece at ten million requests (~280 epochs). Keyed (page,
-- epoch), a piece is one range of small rows: ~0.6 ms. Signing an epoch now inserts its
-- 1,024 rows across the table instead of appending them, once per 65,536 terms.
--
-- Existing signatures are cut into the new rows: bucket b of a row of 64 is bucket b % 16
-- of row page * 4 + b / 16.

CREATE TABLE search_signature_pages (
  page  INTEGER NOT NULL,
  epoch INTEGER NOT NULL,
  bits  BLOB NOT NULL,
  PRIMARY KEY (page, epoch)
) WITHOUT ROWID;

INSERT INTO search_signature_pages (page, epoch, bits)
  SELECT s.page * 4 + q.part, s.epoch, substr(s.bits, q.part * 512 + 1, 512)
  FROM search_signatures s
  CROSS JOIN (SELECT 0 AS part UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3) q
  ORDER BY 1, 2;

DROP TABLE search_signatures;
ALTER TABLE search_signature_pages RENAME TO search_signatures;
