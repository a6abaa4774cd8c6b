import { Empty, ErrorNote, Loading } from '../../components/Feedback.js';
import { Time } from '../../components/Time.js';
import { useDirectory } from '../../state/directory.js';

/** The organisation's projects; they are created by the operator, not here. */
export function ProjectsTable() {
  const projects = useDirectory((s) => s.projects);
  const loading = useDirectory((s) => s.loading.projects ?? false);
  const error = useDirectory((s) => s.errors.projects);
  const load = useDirectory((s) => s.load);

  return (
    <section className="panel" aria-labelledby="projects-heading" data-testid="projects">
      <h2 id="projects-heading">Projects</h2>
      <ErrorNote error={error} onRetry={() => void load()} testId="projects-error" />
      {projects === null ? (
        loading && <Loading>Reading the projects…</Loading>
      ) : projects.length === 0 ? (
        <Empty>This organisation has no projects.</Empty>
      ) : (
        <div className="table-wrap">
          <table aria-labelledby="projects-heading" data-testid="projects-table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {projects.map((project) => (
                <tr key={project.id} data-testid="project-row">
                  <td>{project.name}</td>
                  <td>
                    <Time iso={project.created_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
