import type { Me } from '../../renderer/src/state/session.js';

/** The account the component tests sign in as, unless a test needs another role. */
export const ME: Me = {
  user_id: '2f0c4a4e-7a0e-4c39-9a55-0d7f5d1f0a11',
  email: 'ada@example.com',
  role: 'admin',
  joined_at: '2026-01-02T03:04:05Z',
  organization: { name: 'Analytical Engines' },
};
