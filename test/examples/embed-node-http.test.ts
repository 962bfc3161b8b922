import { embedExampleSuite } from '../helpers/embed-example-suite.js';

// examples/embed-node-http: a node:http server with routes of its own and Tollgate at /rpc.
await embedExampleSuite({ name: 'embed-node-http', notFound: (path) => ({ error: 'not found', path }) });
