import { verifyActivity } from '../domain/activity-chain.js';
import type { ControlStore } from '../stores/control/store.js';

/**
 * `verify-activity [--org NAME]`: recomputes each organisation's activity hash chain (or the
 * one named) and prints, per organisation, that it holds with its event count and head hash
 * (worth keeping elsewhere: an edit that recomputes every later hash changes it), or the first
 * event that does not match. Exit 0 when every chain holds, 1 when one breaks; an unknown
 * organisation is the caller's mistake, thrown for the command runner to report (exit 2).
 */
export async function verifyActivityCommand(
  control: ControlStore,
  orgName: string | undefined,
  out: (line: string) => void,
  unknown: (message: string) => Error,
): Promise<number> {
  let organizations = await control.activity.organizations();
  if (orgName !== undefined) {
    const wanted = await control.organizations.findByName(orgName.trim());
    if (!wanted) throw unknown(`no organization named ${orgName.trim()}`);
    organizations = organizations.filter((org) => org.id === wanted.id);
  }
  let broken = 0;
  for (const org of organizations) {
    const check = await verifyActivity(control, org.id);
    if (check.broken) {
      broken += 1;
      out(`${org.name}: chain BROKEN at event #${check.broken.position}: ${check.broken.message}`);
    } else {
      const head = check.headHash === '' ? 'none' : check.headHash;
      out(`${org.name}: ${check.checked} event(s), chain holds; head hash ${head}`);
    }
  }
  out(
    broken === 0
      ? `verified ${organizations.length} organization(s): every chain holds`
      : `verified ${organizations.length} organization(s): ${broken} chain(s) broken`,
  );
  return broken === 0 ? 0 : 1;
}
