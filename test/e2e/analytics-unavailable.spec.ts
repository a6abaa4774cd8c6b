import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, startServer, test } from './fixtures.js';
import { addRemoteProfile, openScreen, register, unique } from './pages/connect.js';

test('analytics answering 503 raise a banner while the rest keeps working, and it clears on recovery', async ({
  consolePage: page,
  shell,
}, testInfo) => {
  // The telemetry store's folder does not exist yet: the server cannot open it.
  const telemetryDir = join(shell.dataDir, 'telemetry-later');
  const server = await startServer(join(shell.dataDir, 'remote'), {
    args: ['--telemetry-db', join(telemetryDir, 'telemetry.db')],
  });
  try {
    await addRemoteProfile(page, 'Degraded', server.baseUrl);
    const email = `${unique('owner')}@example.com`;
    await register(page, { email, password: 'correct horse battery', organization: unique('Org') });

    await openScreen(page, 'analytics');
    const banner = page.getByTestId('analytics-banner');
    await expect(banner).toContainText('analytics backend unavailable');
    await page.screenshot({ path: testInfo.outputPath('analytics-unavailable.png') });

    await openScreen(page, 'organisation');
    await expect(page.getByRole('cell', { name: email })).toBeVisible();
    await expect(banner).toBeVisible();

    mkdirSync(telemetryDir);
    await openScreen(page, 'analytics');
    await expect(banner).toBeHidden();
  } finally {
    await server.stop();
  }
});
