import { DataTable, type Column } from '../../components/DataTable.js';
import { Time } from '../../components/Time.js';
import { useDirectory } from '../../state/directory.js';

const COLUMNS: Column[] = [{ label: 'Name' }, { label: 'Created' }];

/** The organisation's projects; they are created by the operator, not here. */
export function ProjectsTable() {
  const projects = useDirectory((s) => s.projects);
  const loading = useDirectory((s) => s.loading.projects ?? false);
  const error = useDirectory((s) => s.errors.projects?.message);
  const load = useDirectory((s) => s.load);

  return (
    <section className="panel" aria-labelledby="projects-heading" data-testid="projects">
      <h2 id="projects-heading">Projects</h2>
      <DataTable
        testId="projects-table"
        labelledBy="projects-heading"
        columns={COLUMNS}
        rows={projects}
        rowKey={(project) => project.id}
        row={(project) => (
          <tr data-testid="project-row">
            <td>{project.name}</td>
            <td>
              <Time iso={project.created_at} />
            </td>
          </tr>
        )}
        loading={loading && 'Reading the projects…'}
        error={error}
        onRetry={() => void load()}
        errorTestId="projects-error"
        empty="This organisation has no projects."
      />
    </section>
  );
}
