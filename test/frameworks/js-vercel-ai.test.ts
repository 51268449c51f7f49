import { jsFrameworkSuite } from './js/js-suite.ts';

jsFrameworkSuite('vercel-ai');
