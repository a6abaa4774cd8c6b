import type { Role } from '../stores/control/accounts.js';
import type { Environment } from '../stores/control/keys.js';
import type { CallerKind } from './callers.js';

export const DEMO_ORGANIZATION = 'Demo Organization';

/**
 * Fixed on purpose: the demo is offline and its credentials are printed at start. Their scrypt
 * hashes at the production cost (`shippedHash`, cost 17) are shipped too: the passwords are
 * public, so a hash made once hides nothing more than one made at each seeding, and a new
 * user's first launch does not wait the second that three of them take (test/server/demo.test.ts
 * checks that each still verifies its password).
 */
export const DEMO_ACCOUNTS: { email: string; password: string; role: Role; shippedHash: string }[] = [
  {
    email: 'owner@demo.example',
    password: 'demo-owner-password',
    role: 'owner',
    shippedHash: 'scrypt$17$8$1$hhvdlH7ydI/SbX4oESlQ/A==$pUvfdq1kdNQfBzQNLXfPJxdyWY0c7mwURts9AeN/pyo=',
  },
  {
    email: 'admin@demo.example',
    password: 'demo-admin-password',
    role: 'admin',
    shippedHash: 'scrypt$17$8$1$b++zHra1CqS9c+8YKyUxgA==$EjmBsCcQtj0FP+Iz+tR1CluJo2AxAu2UawePHnk+NgQ=',
  },
  {
    email: 'member@demo.example',
    password: 'demo-member-password',
    role: 'member',
    shippedHash: 'scrypt$17$8$1$jYRMNCXLEDWKcWJIQV/Lgg==$NkFBPX8RxuDYU2mBHmaTH+t7D9hMkXJjGAbGCgfKCtc=',
  },
];

/** The cost the shipped hashes were made at. */
export const SHIPPED_HASH_COST = 17;

/** Besides the `Default` project every organisation gets at sign-up. */
export const DEMO_PROJECTS = ['Support Bot', 'Document Search', 'Internal Tools'] as const;

/** Providers with a key in the demo vault; their routes can be served as BYOK. */
export const DEMO_VAULT = [
  { provider: 'openai', apiKey: 'sk-proj-demo-not-a-real-key-7f3a9c2e41d8b6a05e19' },
  { provider: 'anthropic', apiKey: 'sk-ant-api03-demo-not-a-real-key-2b7d4e9f1a6c' },
] as const;

export type KeyLifecycle =
  | { kind: 'open' }
  | { kind: 'expires'; daysFromNow: number }
  /** Expired while the traffic window ran, so its requests stop there. */
  | { kind: 'expired'; daysAgo: number }
  | { kind: 'revoked'; daysAgo: number };

export interface DemoKeySpec {
  name: string;
  project: 'Default' | (typeof DEMO_PROJECTS)[number];
  environment: Environment;
  issuedBy: 'owner' | 'admin';
  /** Null: issued before the traffic starts. */
  createdDaysAgo: number | null;
  lifecycle: KeyLifecycle;
  /** Whether the key gets a credit limit, sized from the traffic it will carry. */
  limited: boolean;
  allowedModels: string[] | null;
  rateLimitRpm: number;
  weight: number;
  byokShare: number;
  callers: CallerKind[];
  features: string[];
  tagged: number;
}

const chatFeatures = ['chat', 'summarise', 'classify', 'translate'];

export const DEMO_KEYS: readonly DemoKeySpec[] = [
  {
    name: 'Production backend',
    project: 'Default',
    environment: 'production',
    issuedBy: 'owner',
    createdDaysAgo: null,
    lifecycle: { kind: 'open' },
    limited: true,
    allowedModels: null,
    rateLimitRpm: 600,
    weight: 30,
    byokShare: 0.4,
    callers: ['python', 'python', 'langchain'],
    features: chatFeatures,
    tagged: 0.9,
  },
  {
    name: 'Staging backend',
    project: 'Default',
    environment: 'development',
    issuedBy: 'owner',
    createdDaysAgo: null,
    lifecycle: { kind: 'open' },
    limited: false,
    allowedModels: null,
    rateLimitRpm: 120,
    weight: 6,
    byokShare: 0,
    callers: ['python', 'tools'],
    features: chatFeatures,
    tagged: 0.6,
  },
  {
    name: 'Local development',
    project: 'Default',
    environment: 'development',
    issuedBy: 'admin',
    createdDaysAgo: null,
    lifecycle: { kind: 'expires', daysFromNow: 60 },
    limited: false,
    allowedModels: null,
    rateLimitRpm: 60,
    weight: 2,
    byokShare: 0,
    callers: ['tools', 'python', 'node'],
    features: ['playground'],
    tagged: 0.2,
  },
  {
    name: 'Support bot (production)',
    project: 'Support Bot',
    environment: 'production',
    issuedBy: 'owner',
    createdDaysAgo: null,
    lifecycle: { kind: 'open' },
    limited: true,
    allowedModels: ['openai/gpt-4o-mini', 'anthropic/claude-sonnet-4', 'svc/fast'],
    rateLimitRpm: 300,
    weight: 24,
    byokShare: 0.5,
    callers: ['node'],
    features: ['ticket-reply', 'ticket-triage', 'handoff-summary'],
    tagged: 0.95,
  },
  {
    name: 'Support bot evals',
    project: 'Support Bot',
    environment: 'testing',
    issuedBy: 'admin',
    createdDaysAgo: 12,
    lifecycle: { kind: 'open' },
    limited: true,
    allowedModels: ['openai/gpt-4o-mini', 'anthropic/claude-sonnet-4'],
    rateLimitRpm: 60,
    weight: 3,
    byokShare: 0,
    callers: ['python'],
    features: ['eval-run'],
    tagged: 1,
  },
  {
    name: 'Indexer',
    project: 'Document Search',
    environment: 'production',
    issuedBy: 'owner',
    createdDaysAgo: null,
    lifecycle: { kind: 'open' },
    limited: true,
    allowedModels: ['svc/embed', 'openai/gpt-4.1-mini'],
    rateLimitRpm: 1200,
    weight: 14,
    byokShare: 0.3,
    callers: ['langchain'],
    features: ['ingest', 'chunk-summary'],
    tagged: 0.7,
  },
  {
    name: 'Search API',
    project: 'Document Search',
    environment: 'production',
    issuedBy: 'owner',
    createdDaysAgo: null,
    lifecycle: { kind: 'expires', daysFromNow: 180 },
    limited: true,
    allowedModels: null,
    rateLimitRpm: 600,
    weight: 12,
    byokShare: 0.2,
    callers: ['node', 'langchain'],
    features: ['answer', 'rerank', 'query-rewrite'],
    tagged: 0.85,
  },
  {
    name: 'CI integration tests',
    project: 'Document Search',
    environment: 'testing',
    issuedBy: 'admin',
    createdDaysAgo: null,
    lifecycle: { kind: 'open' },
    limited: true,
    allowedModels: ['svc/fast', 'openai/gpt-4o-mini'],
    rateLimitRpm: 60,
    weight: 2,
    byokShare: 0,
    callers: ['tools', 'python'],
    features: ['ci'],
    tagged: 1,
  },
  {
    name: 'Analyst notebook',
    project: 'Internal Tools',
    environment: 'development',
    issuedBy: 'admin',
    createdDaysAgo: null,
    lifecycle: { kind: 'open' },
    limited: false,
    allowedModels: null,
    rateLimitRpm: 60,
    weight: 3,
    byokShare: 0,
    callers: ['python', 'langchain'],
    features: ['analysis'],
    tagged: 0.3,
  },
  {
    name: 'Hackathon prototype',
    project: 'Internal Tools',
    environment: 'development',
    issuedBy: 'admin',
    createdDaysAgo: null,
    lifecycle: { kind: 'expired', daysAgo: 9 },
    limited: false,
    allowedModels: null,
    rateLimitRpm: 60,
    weight: 2,
    byokShare: 0,
    callers: ['node', 'tools'],
    features: ['prototype'],
    tagged: 0.4,
  },
  {
    name: 'Legacy batch job',
    project: 'Internal Tools',
    environment: 'production',
    issuedBy: 'owner',
    createdDaysAgo: null,
    lifecycle: { kind: 'revoked', daysAgo: 5 },
    limited: false,
    allowedModels: null,
    rateLimitRpm: 300,
    weight: 4,
    byokShare: 0,
    callers: ['tools'],
    features: ['nightly-report'],
    tagged: 0.5,
  },
  {
    name: 'Reporting',
    project: 'Internal Tools',
    environment: 'production',
    issuedBy: 'owner',
    createdDaysAgo: null,
    lifecycle: { kind: 'expires', daysFromNow: 90 },
    limited: true,
    allowedModels: ['svc/reasoning', 'svc/auto', 'google/gemini-2.5-pro'],
    rateLimitRpm: 120,
    weight: 3,
    byokShare: 0,
    callers: ['python'],
    features: ['weekly-digest', 'kpi-commentary'],
    tagged: 0.8,
  },
];

/** The account the console offers for one-click sign-in: the demo admin, else the owner. */
export function offeredDemoAccount(): { email: string; password: string } | null {
  const account = DEMO_ACCOUNTS.find((a) => a.role === 'admin') ?? DEMO_ACCOUNTS.find((a) => a.role === 'owner');
  return account ? { email: account.email, password: account.password } : null;
}
