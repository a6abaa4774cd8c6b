import { useEffect } from 'react';
import { unknownLabel } from '../../lib/id-label.js';
import { useRouteTargets } from '../../state/route-targets.js';
import { ChoiceSelect } from './ChoiceSelect.js';

/**
 * "Target": all targets, or the requests one route target (`provider/model`) served, its
 * choices the routes document's targets. A target no longer in the document (an address or a
 * saved view from before a change) stays selected as what it is. Hidden where the control plane
 * has no routes to list.
 */
export function TargetFilter({ value, onChange }: { value: string | null; onChange: (target: string | null) => void }) {
  const targets = useRouteTargets((s) => s.targets);
  const error = useRouteTargets((s) => s.error);
  const notOffered = useRouteTargets((s) => s.notOffered);
  const load = useRouteTargets((s) => s.load);

  useEffect(() => {
    void load();
  }, [load]);

  if (notOffered && value === null) return null;
  return (
    <ChoiceSelect
      label="Target"
      value={value}
      all="All targets"
      choices={targets && targets.map((target) => ({ value: target, label: target }))}
      loading={targets === null && error === null && !notOffered}
      unknown={(target) => (error ? target : unknownLabel('target', target, false))}
      onChange={onChange}
      testId="filter-target"
    />
  );
}
