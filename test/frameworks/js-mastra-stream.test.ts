import { jsFrameworkSuite } from './js/js-suite.ts';

jsFrameworkSuite('mastra-stream');
