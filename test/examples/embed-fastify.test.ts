import { embedExampleSuite } from '../helpers/embed-example-suite.js';

// examples/embed-fastify: a Fastify 5 app with routes of its own (one reading bodies Fastify parsed)
// and Tollgate served from an onRequest hook for URLs under /rpc; unknown URLs get Fastify's own 404.
await embedExampleSuite({
  name: 'embed-fastify',
  echoes: true,
  notFound: (path) => ({ message: `Route POST:${path} not found`, error: 'Not Found', statusCode: 404 }),
});
