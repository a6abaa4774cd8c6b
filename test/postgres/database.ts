import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { NOT_INSTALLED } from './cluster.js';

/**
 * A new empty database in the run's cluster, for one test file or one test: its URL, and a
 * `drop` that ends what is still connected to it and removes it.
 */
export async function freshDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const admin = inject('postgresUrl');
  if (admin === '') throw new Error(NOT_INSTALLED);
  const name = `test_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const dropper = new pg.Client({ connectionString: admin });
      await dropper.connect();
      try {
        await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await dropper.end();
      }
    },
  };
}
