import { importSource, type ImportSource, type SourceReader } from '../../server/ingest/import-source.js';
import { variedRecord } from './request-rows.js';

interface RecordsArgs {
  count: number;
  /** The row at `at` takes the request id of the row at `of`. */
  repeat: { at: number; of: number } | null;
}

/** `count` varied rows as an import's source, read on the import's thread as a file's would be. */
export function recordsSource(args: RecordsArgs): ImportSource<RecordsArgs> {
  return importSource(import.meta.url, args);
}

export const readRows: SourceReader<RecordsArgs> = ({ count, repeat }) => ({
  records: Array.from({ length: count }, (_, i) =>
    i === repeat?.at ? { ...variedRecord(i), req_id: variedRecord(repeat.of).req_id } : variedRecord(i),
  ),
});
