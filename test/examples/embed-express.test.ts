import { embedExampleSuite } from '../helpers/embed-example-suite.js';

// examples/embed-express: an Express 5 app with routes of its own (one reading express.json()
// bodies) and Tollgate mounted at /rpc ahead of the body parser.
await embedExampleSuite({ name: 'embed-express', echoes: true, notFound: (path) => ({ error: 'not found', path }) });
