/**
 * What may import what (ARCHITECTURE.md), checked by `npm run lint` with dependency-cruiser.
 * Paths are relative to the project's root; tests are not cruised (they may reach anything).
 * test/lint/layering.test.ts plants a violation of each rule and sees it refused.
 */
module.exports = {
  forbidden: [
    {
      name: 'electron-only-in-its-shell',
      comment: 'Only main/electron may import Electron: the rest must run where its binary cannot be had.',
      severity: 'error',
      from: { path: '^(main|renderer|server|scripts|bench)/', pathNot: '^main/electron/' },
      to: { path: '(^|/)node_modules/electron/' },
    },
    {
      name: 'renderer-sees-only-the-contract',
      comment: 'The renderer reaches the host through the bridge alone: of main/ and server/ it knows the contract.',
      severity: 'error',
      from: { path: '^renderer/' },
      to: { path: '^(main|server)/', pathNot: '^main/core/contract\\.ts$' },
    },
    {
      name: 'renderer-takes-the-contract-as-types',
      comment: "The contract's schemas are the host's to check; the renderer's bundle carries none of them.",
      severity: 'error',
      from: { path: '^renderer/' },
      to: { path: '^main/core/contract\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'core-below-its-shells',
      comment: 'main/core is shared by the Electron and web shells, so it imports neither.',
      severity: 'error',
      from: { path: '^main/core/' },
      to: { path: '^main/(electron|web)/' },
    },
    {
      name: 'host-reads-the-server-through-its-schemas',
      comment: 'The host talks to any control plane over HTTP: of server/ it may use the schemas of what crosses.',
      severity: 'error',
      from: { path: '^main/' },
      to: { path: '^server/', pathNot: '^server/(schemas/|loopback\\.ts$)' },
    },
    {
      name: 'server-stands-alone',
      comment: 'The control plane runs without the console: server/ imports nothing of main/ or renderer/.',
      severity: 'error',
      from: { path: '^server/' },
      to: { path: '^(main|renderer)/' },
    },
    {
      name: 'stores-below-their-readers',
      comment: 'Stores serve analytics, routes and ingest; knowing them would let a query reshape the storage.',
      severity: 'error',
      from: { path: '^server/stores/' },
      to: { path: '^server/(analytics|routes|ingest)/' },
    },
    {
      name: 'domain-below-its-callers',
      comment: 'Business rules serve routes, the admin command, the demo and ingest, and depend on none of them.',
      severity: 'error',
      from: { path: '^server/domain/' },
      to: { path: '^server/(admin|demo|ingest)/' },
    },
    {
      name: 'ingest-below-its-sources',
      comment: 'Sources (NDJSON files, demo traffic, the gateway) feed the pipeline; it knows none of them.',
      severity: 'error',
      from: { path: '^server/ingest/' },
      to: { path: '^server/(admin|demo|routes)/' },
    },
    {
      name: 'gateway-beside-the-api',
      comment:
        'The gateway serves callers on its own port from the stores, domain and ingest; the control-plane API, ' +
        'the operator command and the demo are not on its request path.',
      severity: 'error',
      from: { path: '^server/gateway/' },
      to: { path: '^server/(routes|plugins|admin|demo)/' },
    },
    {
      name: 'gateway-asks-the-control-plane',
      comment:
        'A gateway runs on machines without the stores: it asks its authority (server/admission, here or over ' +
        'the internal API) and writes no row itself. Of the stores it may know the row type.',
      severity: 'error',
      from: { path: '^server/gateway/' },
      to: { path: '^server/(stores|ingest)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'admission-below-the-gateway',
      comment: "The control plane's side of the gateways decides requests; the request path and the API call it.",
      severity: 'error',
      from: { path: '^server/admission/' },
      to: { path: '^server/(gateway|routes)/' },
    },
    {
      name: 'no-circular',
      comment: 'An import circle makes load order matter and leaves no module of it changeable alone.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    // Type-only imports count: a circle of types is still a circle to read.
    tsPreCompilationDeps: true,
    doNotFollow: { path: '(^|/)node_modules/' },
  },
};
