import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorFromResponse } from '../../main/core/errors.js';
import { resolveConfig } from '../../server/config.js';
import { configFromArgs } from '../../server/serve.js';
import { PASSWORD, TestClient, unique, type Answer, type TestServer, startServer } from './harness.js';

// On @zxcvbn-ts/language-common's list of common passwords: password123 at rank 795, qwertyuiop at 22.
const COMMON = 'password123';
const VARIANTS = ['PassWord123', 'QWERTYUIOP', 'ｐａｓｓｗｏｒｄ１２３'];
const PASSPHRASE = 'seven otters audit the lighthouse ledger at dawn';
const COMMON_REFUSAL = {
  detail: [{ loc: ['body', 'password'], msg: expect.stringContaining('commonly used'), type: 'common_password' }],
};

async function registerWith(server: TestServer, password: string, email = unique().email): Promise<Answer> {
  return new TestClient(server.baseUrl).post('/auth/register', { email, password, organization_name: unique().org });
}

/**
 * The field the console's host reads from the answer, which decides where the form shows it: a
 * 422 names it in `detail[0].loc`, as a schema refusal does, and carries no `x-error-field`.
 */
function consoleFieldOf(answer: Answer): string | undefined {
  expect(answer.headers['x-error-field']).toBeUndefined();
  return errorFromResponse(answer.status, answer.body).field;
}

describe('new passwords at the default minimum', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('refuses a common password with a 422 at the password field and creates no account', async () => {
    const { email } = unique();
    const refused = await registerWith(server, COMMON, email);
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual(COMMON_REFUSAL);
    expect(refused.headers['set-cookie']).toBeUndefined();
    expect(consoleFieldOf(refused)).toBe('password');

    const login = await new TestClient(server.baseUrl).post('/auth/login', { email, password: COMMON });
    expect(login.status).toBe(401);
    // The email is still free: nothing was created by the refused attempt.
    expect((await registerWith(server, PASSWORD, email)).status).toBe(201);
  });

  it('refuses the case and compatibility variants of a common password, not a long uncommon one', async () => {
    for (const password of VARIANTS) {
      const refused = await registerWith(server, password);
      expect(refused.status, password).toBe(422);
      expect(refused.body).toEqual(COMMON_REFUSAL);
    }
    expect((await registerWith(server, PASSPHRASE)).status).toBe(201);
  });

  it('never repeats a refused password in its answer or the log', async () => {
    const password = 'Qwerty123456'; // qwerty123456 is at rank 2688
    const refused = await registerWith(server, password);
    expect(refused.status).toBe(422);
    const said = JSON.stringify([refused.headers, refused.body]).toLowerCase();
    expect(said).not.toContain(password.toLowerCase());
    // The request was logged, without its body.
    expect(server.logs()).toContain('/auth/register');
    expect(server.logs().toLowerCase()).not.toContain(password.toLowerCase());
  });
});

describe('a minimum raised by the operator', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ passwordMinLength: 15 });
  });
  afterAll(() => server.close());

  it('refuses a shorter password in the shape of the schema refusal, and accepts one of the minimum', async () => {
    const fourteen = 'tangerine-oak7';
    expect(fourteen).toHaveLength(14);
    const refused = await registerWith(server, fourteen);
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({
      detail: [{ loc: ['body', 'password'], msg: 'must be at least 15 characters', type: 'minLength' }],
    });
    expect(consoleFieldOf(refused)).toBe('password');
    // The contract's own limit (8) still answers from the schema, in the same shape.
    const schema = await registerWith(server, 'short');
    expect(schema.status).toBe(422);
    expect(schema.body.detail[0]).toMatchObject({ loc: ['body', 'password'], type: 'minLength' });

    expect((await registerWith(server, `${fourteen}s`)).status).toBe(201);
  });
});

describe('SVC_PASSWORD_MIN_LENGTH', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-password-policy-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('defaults to 8 and takes 8 to 64', () => {
    expect(resolveConfig({ dataDir }).passwordMinLength).toBe(8);
    for (const value of [8, 15, 64]) {
      expect(resolveConfig({ dataDir, passwordMinLength: value }).passwordMinLength).toBe(value);
    }
    const input = configFromArgs([], { SVC_DATA_DIR: dataDir, SVC_PASSWORD_MIN_LENGTH: '15' });
    expect(resolveConfig(input).passwordMinLength).toBe(15);
  });

  it('refuses a minimum below the contract or above what ASVS lets a minimum be', () => {
    for (const value of [7, 65]) {
      expect(() => resolveConfig({ dataDir, passwordMinLength: value })).toThrow(
        `SVC_PASSWORD_MIN_LENGTH must be an integer from 8 to 64, not ${value}`,
      );
      const input = configFromArgs([], { SVC_DATA_DIR: dataDir, SVC_PASSWORD_MIN_LENGTH: String(value) });
      expect(() => resolveConfig(input)).toThrow('SVC_PASSWORD_MIN_LENGTH');
    }
  });
});
