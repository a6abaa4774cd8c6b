import type { ServerSecrets } from '../app.js';
import type { ServerConfig } from '../config.js';
import { issueKey } from '../domain/keys.js';
import { pkrToMicro } from '../domain/money.js';
import { createAccount } from '../domain/sign-up.js';
import { storeProviderKey } from '../domain/vault.js';
import { hashPassword } from '../security/passwords.js';
import { OPERATOR_SOURCE } from '../stores/control/activity.js';
import type { Role } from '../stores/control/accounts.js';
import type { ControlStore } from '../stores/control/store.js';

export const DEMO_ORGANIZATION = 'Demo Organization';

/** Fixed on purpose: the demo is offline and its credentials are printed at start. */
export const DEMO_ACCOUNTS: { email: string; password: string; role: Role }[] = [
  { email: 'owner@demo.example', password: 'demo-owner-password', role: 'owner' },
  { email: 'member@demo.example', password: 'demo-member-password', role: 'member' },
];

const DAY = 24 * 3600 * 1000;

/**
 * Seeds the demo organisation once: accounts, projects, keys, a vault entry and a
 * deposit. Returns the credentials, or null when the organisation already exists.
 */
export async function seedDemo(
  control: ControlStore,
  secrets: ServerSecrets,
  config: Pick<ServerConfig, 'passwordCost' | 'now'>,
): Promise<{ accounts: typeof DEMO_ACCOUNTS } | null> {
  if (control.organizations.findByName(DEMO_ORGANIZATION)) return null;
  const hashes = await Promise.all(DEMO_ACCOUNTS.map((a) => hashPassword(a.password, config.passwordCost)));
  const now = config.now();
  const actor = { sourceIp: OPERATOR_SOURCE };
  control.write(() => {
    const accounts = DEMO_ACCOUNTS.map((demo, i) =>
      createAccount(control, {
        email: demo.email,
        passwordHash: hashes[i] ?? null,
        organizationName: DEMO_ORGANIZATION,
        now: now - 30 * DAY + i * DAY,
        ...actor,
      }),
    );
    const owner = accounts[0];
    if (!owner) throw new Error('demo owner missing');
    const orgId = owner.organization.id;
    control.organizations.deposit(orgId, pkrToMicro(5000), now - 29 * DAY);
    control.activity.record({
      orgId,
      actorId: null,
      action: 'budget.deposited',
      target: '',
      at: now - 29 * DAY,
      ...actor,
    });
    const [defaultProject] = control.organizations.projects(orgId);
    const supportBot = control.organizations.addProject(orgId, 'Support Bot', now - 28 * DAY);
    const keys = [
      {
        projectId: defaultProject!.id,
        name: 'Production backend',
        environment: 'production' as const,
        creditLimitMicro: pkrToMicro(2000),
        allowedModels: null,
      },
      {
        projectId: defaultProject!.id,
        name: 'Local development',
        environment: 'development' as const,
        creditLimitMicro: null,
        allowedModels: null,
      },
      {
        projectId: supportBot.id,
        name: 'Support bot',
        environment: 'production' as const,
        creditLimitMicro: pkrToMicro(1000),
        allowedModels: ['openai/gpt-4o-mini', 'anthropic/claude-sonnet-4'],
      },
    ];
    for (const key of keys) {
      issueKey(control, secrets.keyHashSecret, {
        orgId,
        actorId: owner.account.id,
        expiresAt: null,
        rateLimitRpm: 60,
        now: now - 27 * DAY,
        ...actor,
        ...key,
      });
    }
    storeProviderKey(control, secrets.vaultMasterKey, {
      orgId,
      actorId: owner.account.id,
      provider: 'openai',
      apiKey: 'sk-demo-provider-key-not-a-real-one-0000',
      now: now - 26 * DAY,
      ...actor,
    });
  });
  return { accounts: DEMO_ACCOUNTS };
}
