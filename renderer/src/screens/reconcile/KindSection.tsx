import { DataTable, type Column } from '../../components/DataTable.js';
import { useRoute } from '../../state/route.js';
import {
  KIND_TITLES,
  checkTitle,
  differenceText,
  kindCounts,
  requestLogParams,
  whereText,
  type KindReport,
  type Line,
} from './reconcile-lines.js';

const COLUMNS: Column[] = [
  { label: 'Status' },
  { label: 'Check' },
  { label: 'Where' },
  { label: 'Difference' },
  { label: 'Request log', hidden: true },
];

/** One kind of check: its counts, and the lines that disagree or wait, each where it is. */
export function KindSection({ kind }: { kind: KindReport }) {
  const go = useRoute((s) => s.go);
  const headingId = `reconcile-${kind.kind}`;
  return (
    <section aria-labelledby={headingId} className="stack" data-testid={`reconcile-kind-${kind.kind}`}>
      <h2 id={headingId}>{KIND_TITLES[kind.kind]}</h2>
      <p className="muted" data-testid="reconcile-counts">
        {kindCounts(kind)}
      </p>
      {kind.lines.length > 0 && (
        <DataTable
          testId={`reconcile-lines-${kind.kind}`}
          labelledBy={headingId}
          columns={COLUMNS}
          rows={kind.lines}
          rowKey={(_line, index) => index}
          empty={null}
          row={(line: Line) => {
            const link = requestLogParams(line);
            return (
              <tr data-testid="reconcile-line" data-check={line.check} data-status={line.status}>
                <td>
                  <span className={`reconcile-status ${line.status}`}>
                    {line.status === 'pending' ? 'Pending' : 'Disagrees'}
                  </span>
                </td>
                <td>{checkTitle(line)}</td>
                <td className="reconcile-where">
                  {whereText(line).map((part) => (
                    <span key={part}>{part}</span>
                  ))}
                </td>
                <td className="reconcile-difference">
                  {line.differences.map((difference) => (
                    <span key={difference.measure}>{differenceText(difference)}</span>
                  ))}
                  <small className="muted">{line.note}</small>
                </td>
                <td>
                  {link && (
                    <button type="button" className="link" onClick={() => go('requests', link)}>
                      Open in the request log
                    </button>
                  )}
                </td>
              </tr>
            );
          }}
        />
      )}
      {kind.lines_omitted > 0 && <p className="muted">… and {kind.lines_omitted} more, counted but not listed.</p>}
    </section>
  );
}
