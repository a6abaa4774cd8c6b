/** The console's screens, in the order of its navigation (DOM-free: end-to-end tests import it too). */
export const SCREENS = [
  'keys',
  'vault',
  'analytics',
  'spend',
  'requests',
  'health',
  'activity',
  'reconcile',
  'alerts',
  'organisation',
  'routes',
] as const;
export type Screen = (typeof SCREENS)[number];
