import type { TestProject } from 'vitest/node';
import { serverPrograms, startCluster } from './cluster.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /**
     * The run's throwaway PostgreSQL cluster (see cluster.ts), in which each test file makes its
     * own database; empty where PostgreSQL is not installed, and only its tests fail then.
     */
    postgresUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  if (serverPrograms() === null) {
    project.provide('postgresUrl', '');
    return () => undefined;
  }
  const cluster = await startCluster();
  project.provide('postgresUrl', cluster.url);
  return () => cluster.stop();
}
