import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, startServer, test } from './fixtures.js';
import { addRemoteProfile, openScreen, register, signOut, unique } from './pages/connect.js';
import { OrganisationPage } from './pages/organisation.js';

const PASSWORD = 'correct horse battery';

test('the owner renames the organisation for good; a member who joins sees it but may not rename it', async ({
  consolePage: page,
}, testInfo) => {
  const dir = mkdtempSync(join(tmpdir(), 'gc-e2e-org-'));
  const server = await startServer(dir);
  try {
    const owner = { email: `${unique('owner')}@acme.example`, password: PASSWORD, organization: unique('Acme') };
    await addRemoteProfile(page, 'Own control plane', server.baseUrl);
    await register(page, owner);

    await openScreen(page, 'organisation');
    const organisation = new OrganisationPage(page);
    await expect(organisation.nameInput).toHaveValue(owner.organization);
    await expect(organisation.memberRow(owner.email)).toContainText('owner');
    await expect(organisation.memberRow(owner.email)).toContainText('(you)');
    // Sign-up gives every organisation its first project.
    await expect(organisation.projects).toHaveCount(1);

    const renamed = unique('Acme Labs');
    await organisation.rename(renamed);
    // The sidebar's session indicator follows at once.
    await expect(page.getByTestId('session-indicator')).toContainText(`owner · ${renamed}`);
    await page.screenshot({ path: testInfo.outputPath('organisation.png'), fullPage: true });

    // It is the server's name now, not just the screen's.
    await page.reload();
    await expect(organisation.nameInput).toHaveValue(renamed);
    await expect(page.getByTestId('session-indicator')).toContainText(`owner · ${renamed}`);

    // A teammate joins by the new name, as a member.
    await signOut(page);
    const member = { email: `${unique('member')}@acme.example`, password: PASSWORD, organization: renamed };
    await register(page, member);
    await expect(page.getByTestId('session-indicator')).toContainText(`member · ${renamed}`);

    await openScreen(page, 'organisation');
    await expect(page.getByTestId('organisation-name-text')).toHaveText(renamed);
    await expect(organisation.refusal).toHaveText(
      "Only the organisation's owner and admins can rename it; you are a member.",
    );
    await expect(organisation.nameInput).toHaveCount(0);
    await expect(organisation.renameButton).toHaveCount(0);
    await expect(organisation.members).toHaveCount(2);
    await expect(organisation.memberRow(owner.email)).toContainText('owner');
    await expect(organisation.memberRow(member.email)).toContainText('member');
    await expect(organisation.memberRow(member.email)).toContainText('(you)');
    await page.screenshot({ path: testInfo.outputPath('organisation-member.png'), fullPage: true });
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
