import { DataTable, type Column } from '../../components/DataTable.js';
import { Time } from '../../components/Time.js';
import type { Me } from '../../state/session.js';
import { useOrganisation } from './organisation-store.js';

const ROLE_NOTES: Record<Me['role'], string> = {
  owner: 'Created the organisation',
  admin: 'May rename the organisation',
  member: 'Joined by registering with its name',
};

const COLUMNS: Column[] = [{ label: 'Email' }, { label: 'Role' }, { label: 'Joined' }];

/** Everyone in the organisation; roles change only through the operator's command. */
export function MembersTable({ me }: { me: Me }) {
  const members = useOrganisation((s) => s.members);
  const loading = useOrganisation((s) => s.membersLoading);
  const error = useOrganisation((s) => s.membersError);
  const loadMembers = useOrganisation((s) => s.loadMembers);

  return (
    <section className="panel" aria-labelledby="members-heading" data-testid="members">
      <h2 id="members-heading">Members</h2>
      <DataTable
        testId="members-table"
        labelledBy="members-heading"
        columns={COLUMNS}
        rows={members}
        rowKey={(member) => member.user_id}
        row={(member) => (
          <tr data-testid="member-row">
            <td>
              {member.email}
              {member.user_id === me.user_id && <span className="muted"> (you)</span>}
            </td>
            <td title={ROLE_NOTES[member.role]}>{member.role}</td>
            <td>
              <Time iso={member.joined_at} />
            </td>
          </tr>
        )}
        loading={loading && 'Reading the members…'}
        error={error}
        onRetry={() => void loadMembers()}
        errorTestId="members-error"
        empty="No members."
      />
    </section>
  );
}
