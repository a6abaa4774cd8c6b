import type { Key, Model, Project } from '../../../renderer/src/state/directory.js';
import { resetOrganisationStores } from '../../../renderer/src/state/organisation-scope.js';
import { useRoute } from '../../../renderer/src/state/route.js';
import { useSession } from '../../../renderer/src/state/session.js';
import { Refusal, bridge } from '../fake-bridge.js';

/** A small organisation for the keys screen's tests, answered through the fake bridge. */

export const PROJECTS: Project[] = [
  { id: '00000000-0000-4000-8000-0000000000a1', name: 'Checkout', created_at: '2026-01-01T00:00:00Z' },
  { id: '00000000-0000-4000-8000-0000000000a2', name: 'Search', created_at: '2026-01-02T00:00:00Z' },
];

const base = {
  rate_limit_rpm: 60,
  expires_at: null,
  credit_limit_cents: null,
  allowed_models: null,
  last_used_at: null,
} satisfies Partial<Key>;

export const KEYS: Key[] = [
  {
    ...base,
    id: '00000000-0000-4000-8000-0000000000b1',
    name: 'Checkout prod',
    project_id: PROJECTS[0]!.id,
    key_prefix: 'sk_svc_aaaa1111',
    environment: 'production',
    rate_limit_rpm: 600,
    credit_limit_cents: 1_500_000_000,
    allowed_models: ['openai/gpt-4o-mini', 'svc/fast'],
    expires_at: '2030-06-01T12:00:00.000Z',
    created_at: '2026-02-01T10:00:00.000Z',
    last_used_at: '2026-03-01T09:30:00.000Z',
  },
  {
    ...base,
    id: '00000000-0000-4000-8000-0000000000b2',
    name: 'Search dev',
    project_id: PROJECTS[1]!.id,
    key_prefix: 'sk_svc_bbbb2222',
    environment: 'development',
    created_at: '2026-02-03T10:00:00.000Z',
  },
  {
    ...base,
    id: '00000000-0000-4000-8000-0000000000b3',
    name: 'Checkout tests',
    project_id: PROJECTS[0]!.id,
    key_prefix: 'sk_svc_cccc3333',
    environment: 'testing',
    rate_limit_rpm: 120,
    credit_limit_cents: 250_000,
    created_at: '2026-02-02T10:00:00.000Z',
  },
];

export const MODELS: Model[] = [
  { id: 'openai/gpt-4o-mini', provider: 'openai', active: true },
  { id: 'anthropic/claude-sonnet-4', provider: 'anthropic', active: true },
  { id: 'openai/gpt-3.5-turbo', provider: 'openai', active: false },
];

/** Micro-PKR spent, as GET /admin/usage-throttling answers it. */
export const SPENT: Record<string, number> = { [KEYS[0]!.id]: 12_340_000, [KEYS[1]!.id]: 0, [KEYS[2]!.id]: 100_000 };

export function signedIn(): void {
  useSession.setState({
    phase: 'console',
    profileId: 'p1',
    me: {
      user_id: '00000000-0000-4000-8000-0000000000c1',
      email: 'admin@example.com',
      role: 'admin',
      joined_at: '2026-01-01T00:00:00Z',
      organization: { name: 'Example' },
    },
  });
  resetOrganisationStores();
  window.history.replaceState(null, '', '/#/keys');
  useRoute.setState({ screen: 'keys', params: {} });
}

/** Answers the directory and spend reads; `keys` is read on every call, so a test can change it. */
export function serveOrganisation(state: { keys: Key[]; models?: Model[] | Error; spendRefused?: boolean }): void {
  bridge.on('api.projects', () => ({ projects: PROJECTS }));
  bridge.on('api.listKeys', () => ({ keys: state.keys }));
  bridge.on('api.models', () => {
    if (state.models instanceof Error) throw state.models;
    return { models: state.models ?? MODELS };
  });
  bridge.on('api.usageThrottling', () => {
    if (state.spendRefused) throw new Refusal(403, 'owner or admin role required');
    return {
      time_range: '24h',
      keys: state.keys.map((k) => ({
        id: k.id,
        name: k.name,
        key_prefix: k.key_prefix,
        rate_limit_rpm: k.rate_limit_rpm,
        requests_last_minute: 0,
        throttled_requests: 0,
        credit_limit_cents: k.credit_limit_cents,
        spent_cents: SPENT[k.id] ?? 0,
      })),
    };
  });
}
