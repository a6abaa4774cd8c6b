import { Empty, ErrorNote, Loading } from '../../components/Feedback.js';
import { Time } from '../../components/Time.js';
import type { Me } from '../../state/session.js';
import { useOrganisation } from './organisation-store.js';

const ROLE_NOTES: Record<Me['role'], string> = {
  owner: 'Created the organisation',
  admin: 'May rename the organisation',
  member: 'Joined by registering with its name',
};

/** Everyone in the organisation; roles change only through the operator's command. */
export function MembersTable({ me }: { me: Me }) {
  const members = useOrganisation((s) => s.members);
  const loading = useOrganisation((s) => s.membersLoading);
  const error = useOrganisation((s) => s.membersError);
  const loadMembers = useOrganisation((s) => s.loadMembers);

  return (
    <section className="panel" aria-labelledby="members-heading" data-testid="members">
      <h2 id="members-heading">Members</h2>
      <ErrorNote error={error} onRetry={() => void loadMembers()} testId="members-error" />
      {members === null ? (
        loading && <Loading>Reading the members…</Loading>
      ) : members.length === 0 ? (
        <Empty>No members.</Empty>
      ) : (
        <div className="table-wrap">
          <table aria-labelledby="members-heading" data-testid="members-table">
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Joined</th>
              </tr>
            </thead>
            <tbody>
              {members.map((member) => (
                <tr key={member.user_id} data-testid="member-row">
                  <td>
                    {member.email}
                    {member.user_id === me.user_id && <span className="muted"> (you)</span>}
                  </td>
                  <td title={ROLE_NOTES[member.role]}>{member.role}</td>
                  <td>
                    <Time iso={member.joined_at} />
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
