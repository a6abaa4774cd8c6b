import { useEffect } from 'react';
import { useDirectory } from '../../state/directory.js';
import { useSession } from '../../state/session.js';
import { useJoinPolicy } from './join-policy-store.js';
import { JoinPolicyPanel } from './JoinPolicyPanel.js';
import { MembersTable } from './MembersTable.js';
import { OrganisationName } from './OrganisationName.js';
import { useOrganisation } from './organisation-store.js';
import { ProjectsTable } from './ProjectsTable.js';
import { useReportingZone } from './reporting-zone-store.js';
import { ReportingZonePanel } from './ReportingZonePanel.js';
import { useRetention } from './retention-store.js';
import { RetentionPanel } from './RetentionPanel.js';
import './organisation.css';
import { dataState } from '../../lib/data-state.js';

/**
 * The organisation's name, who may join it, its reporting time zone, how long its request log is
 * kept, who belongs to it, and its projects.
 */
export function OrganisationScreen() {
  const me = useSession((s) => s.me);
  const loadMembers = useOrganisation((s) => s.loadMembers);
  const members = useOrganisation((s) => s.members);
  const membersError = useOrganisation((s) => s.membersError);
  const loadJoinPolicy = useJoinPolicy((s) => s.load);
  const loadReportingZone = useReportingZone((s) => s.load);
  const loadRetention = useRetention((s) => s.load);
  const loadDirectory = useDirectory((s) => s.load);

  useEffect(() => {
    void loadMembers();
    void loadJoinPolicy();
    void loadReportingZone();
    void loadRetention();
    void loadDirectory();
  }, [loadMembers, loadJoinPolicy, loadReportingZone, loadRetention, loadDirectory]);

  if (!me) return null;
  return (
    <div className="organisation stack" data-testid="organisation-screen" data-state={dataState(members, membersError)}>
      <OrganisationName me={me} />
      <JoinPolicyPanel />
      <ReportingZonePanel me={me} />
      <RetentionPanel me={me} />
      <MembersTable me={me} />
      <ProjectsTable />
    </div>
  );
}
