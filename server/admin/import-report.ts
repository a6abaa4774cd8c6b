import type { ImportEvent } from '../ingest/record-requests.js';

/**
 * An import's progress as lines for the operator: a ten-million-row import runs for
 * minutes, and its commit for most of one, so the command says where it is and how fast.
 */
export function importReport(out: (line: string) => void): (event: ImportEvent) => void {
  return (event) => {
    switch (event.kind) {
      case 'upgrading':
        out(`upgrading the telemetry store: ${event.migration} (a large store takes minutes)`);
        return;
      case 'empty-log':
        out(
          'the request log is empty: the import holds it alone until its commit (servers on it wait), its indexes built after the rows',
        );
        return;
      case 'written':
        out(`${event.rows} request(s) written (${Math.round((event.rows * 1000) / Math.max(event.ms, 1))} a second)`);
        return;
      case 'committing':
        out(`${event.rows} request(s) written; finishing the rollups and search index, then committing`);
        return;
      case 'unsettled':
        out(`committed; their spend is not settled yet (${event.message}): the next start or import settles it`);
        return;
    }
  };
}
